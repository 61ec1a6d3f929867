//! Bootstrap: how ranks find each other (PMI wire clients, singleton).
