//! Build script of mpi-capi:
//! - gives libmpi.so the SONAME `libmpi.so.12` (the MPICH ABI's library name);
//! - generates `mpi.h` with cbindgen from the crate's Rust definitions, post-processes it
//!   (see `postprocess`), and writes it to `$OUT_DIR/mpi.h` and
//!   `target/<profile>/include/mpi.h`.
use std::env;
use std::fs;
use std::path::{Path, PathBuf};

fn main() {
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libmpi.so.12");
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=cbindgen.toml");
    println!("cargo:rerun-if-changed=src");

    let crate_dir = PathBuf::from(env::var("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR"));
    let out_dir = PathBuf::from(env::var("OUT_DIR").expect("OUT_DIR"));
    let config = cbindgen::Config::from_file(crate_dir.join("cbindgen.toml"))
        .expect("mpi-capi/cbindgen.toml must be a valid cbindgen configuration");
    let bindings = cbindgen::Builder::new()
        .with_crate(&crate_dir)
        .with_config(config)
        .generate()
        .expect("cbindgen could not generate mpi.h");
    let mut raw = Vec::new();
    bindings.write(&mut raw);
    let header = postprocess(&String::from_utf8(raw).expect("cbindgen output is UTF-8"));

    write_if_changed(&out_dir.join("mpi.h"), &header);
    // OUT_DIR is target/<profile>/build/mpi-capi-<hash>/out: three levels up is the profile
    // directory, next to libmpi.so.
    if let Some(profile_dir) = out_dir.ancestors().nth(3) {
        write_if_changed(&profile_dir.join("include").join("mpi.h"), &header);
    }
}

fn write_if_changed(path: &Path, content: &str) {
    if fs::read_to_string(path).map(|old| old == content).unwrap_or(false) {
        return;
    }
    if let Some(dir) = path.parent() {
        fs::create_dir_all(dir).unwrap_or_else(|e| panic!("cannot create {}: {e}", dir.display()));
    }
    fs::write(path, content).unwrap_or_else(|e| panic!("cannot write {}: {e}", path.display()));
}

/// Turn cbindgen's C into the header C programs expect:
/// 1. `#define MPI_INT (MPI_Datatype)1275069445` -> `#define MPI_INT ((MPI_Datatype)0x4c000405)`
///    (typed, parenthesised, usable in `switch` labels and static initialisers);
///    `#define MPI_UNDEFINED -32766` -> `#define MPI_UNDEFINED (-32766)`.
/// 2. Callback typedefs become the function types of the standard:
///    `typedef int (*MPI_Copy_function)(...)` -> `typedef int MPI_Copy_function(...)`,
///    and parameters of those types become pointers (`MPI_Copy_function *copy_fn`).
/// 3. `MPI_Pcontrol` / `PMPI_Pcontrol` get their C varargs back.
fn postprocess(src: &str) -> String {
    let mut callbacks: Vec<String> = Vec::new();
    let mut lines: Vec<String> = Vec::new();
    for line in src.lines() {
        if let Some(fixed) = fix_define(line) {
            lines.push(fixed);
        } else if let Some((fixed, name)) = fix_fn_pointer_typedef(line) {
            callbacks.push(name);
            lines.push(fixed);
        } else {
            lines.push(line.to_string());
        }
    }
    let mut out = String::with_capacity(src.len() + 1024);
    for line in &lines {
        let mut line = line.clone();
        if !line.starts_with("typedef") && line.contains('(') {
            for name in &callbacks {
                line = pointerize_param(&line, name);
            }
        }
        for f in ["MPI_Pcontrol", "PMPI_Pcontrol"] {
            let from = format!("int {f}(int level);");
            if line.trim() == from {
                line = line.replace(&from, &format!("int {f}(const int level, ...);"));
            }
        }
        out.push_str(&line);
        out.push('\n');
    }
    out
}

fn fix_define(line: &str) -> Option<String> {
    let rest = line.strip_prefix("#define ")?;
    let (name, value) = rest.split_once(' ')?;
    let value = value.trim();
    if let Some(cast) = value.strip_prefix('(') {
        // `(Type)digits[u]`
        let (ty, num) = cast.split_once(')')?;
        let digits = num.trim_end_matches('u');
        if ty.contains(' ') || digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let v: u64 = digits.parse().ok()?;
        return Some(format!("#define {name} (({ty})0x{v:08x})"));
    }
    if value.starts_with('-') && value[1..].bytes().all(|b| b.is_ascii_digit()) {
        return Some(format!("#define {name} ({value})"));
    }
    None
}

/// `typedef RET (*NAME)(ARGS);` -> (`typedef RET NAME(ARGS);`, NAME)
fn fix_fn_pointer_typedef(line: &str) -> Option<(String, String)> {
    if !line.starts_with("typedef ") {
        return None;
    }
    let start = line.find("(*")?;
    let end = start + line[start..].find(')')?;
    let name = &line[start + 2..end];
    if name.is_empty() || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
        return None;
    }
    let fixed = format!("{}{}{}", &line[..start], name, &line[end + 1..]);
    Some((fixed, name.to_string()))
}

/// In a prototype, `NAME ident` (a parameter of callback type `NAME`) -> `NAME *ident`.
fn pointerize_param(line: &str, name: &str) -> String {
    let pattern = format!("{name} ");
    let mut out = String::with_capacity(line.len() + 8);
    let mut rest = line;
    while let Some(pos) = rest.find(&pattern) {
        let is_ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
        let before_ok = pos == 0 || !is_ident(rest.as_bytes()[pos - 1]);
        let after_ok = rest.as_bytes().get(pos + pattern.len()).is_some_and(|&c| is_ident(c));
        out.push_str(&rest[..pos]);
        out.push_str(name);
        out.push(' ');
        if before_ok && after_ok {
            out.push('*');
        }
        rest = &rest[pos + pattern.len()..];
    }
    out.push_str(rest);
    out
}
