/* MPI-4.0 additions outside communication: the MPI_T event interface (OxMPI has no
 * events or event sources: counts are 0, every index and handle is invalid, and every
 * call before MPI_T_init_thread says MPI_T_ERR_NOT_INITIALIZED) and the status
 * conversions of mpi_f08 (MPI_Status <-> MPI_F08_status <-> Fortran INTEGER status) on a
 * status a real receive filled in. Any number of ranks. */
#include "testutil.h"

static void expect(int got, int want, const char *what)
{
    CHECK(got == want, "%s: got %d, expected %d", what, got, want);
}

int main(int argc, char **argv)
{
    int size, n = -1, provided;
    tu_init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int rank = tu_rank;

    /* MPI_T events. */
    expect(MPI_T_event_get_num(&n), MPI_T_ERR_NOT_INITIALIZED, "event_get_num before init");
    MPI_OK(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
    n = -1;
    MPI_OK(MPI_T_event_get_num(&n));
    expect(n, 0, "number of events");
    n = -1;
    MPI_OK(MPI_T_source_get_num(&n));
    expect(n, 0, "number of event sources");
    int idx = -1;
    expect(MPI_T_event_get_index("no_such_event", &idx), MPI_T_ERR_INVALID_NAME, "event_get_index");
    char name[64], desc[64];
    int name_len = sizeof name, desc_len = sizeof desc, verbosity, num_elements, bind;
    MPI_Datatype types[4];
    MPI_Aint displs[4];
    MPI_T_enum enumtype;
    MPI_Info info;
    expect(MPI_T_event_get_info(0, name, &name_len, &verbosity, types, displs, &num_elements, &enumtype, &info, desc, &desc_len, &bind),
           MPI_T_ERR_INVALID_INDEX, "event_get_info(0)");
    MPI_T_event_registration reg;
    expect(MPI_T_event_handle_alloc(0, NULL, MPI_INFO_NULL, &reg), MPI_T_ERR_INVALID_INDEX, "event_handle_alloc(0)");
    MPI_Count ts;
    expect(MPI_T_source_get_timestamp(0, &ts), MPI_T_ERR_INVALID_INDEX, "source_get_timestamp(0)");
    expect(MPI_T_category_get_num_events(0, &n), MPI_T_ERR_INVALID_INDEX, "category_get_num_events(0)");
    MPI_OK(MPI_T_finalize());
    expect(MPI_T_source_get_num(&n), MPI_T_ERR_NOT_INITIALIZED, "source_get_num after finalize");

    /* Status conversions on a real status: 3 ints from the left neighbour, tag 40 + rank. */
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int out[3] = {rank, rank, rank}, in[5];
    MPI_Status st, back;
    MPI_OK(MPI_Sendrecv(out, 3, MPI_INT, right, 40 + rank, in, 5, MPI_INT, left, 40 + left, MPI_COMM_WORLD, &st));
    MPI_F08_status f08, f08b;
    MPI_Fint f[MPI_F_STATUS_SIZE];
    MPI_OK(MPI_Status_c2f08(&st, &f08));
    CHECK(f08.MPI_SOURCE == left && f08.MPI_TAG == 40 + left, "c2f08: source %d tag %d", f08.MPI_SOURCE, f08.MPI_TAG);
    MPI_OK(MPI_Status_f082f(&f08, f));
    CHECK(f[MPI_F_SOURCE] == left && f[MPI_F_TAG] == 40 + left, "f082f: source %d tag %d", (int)f[MPI_F_SOURCE], (int)f[MPI_F_TAG]);
    MPI_OK(MPI_Status_f2f08(f, &f08b));
    MPI_OK(MPI_Status_f082c(&f08b, &back));
    int count = -1;
    MPI_OK(MPI_Get_count(&back, MPI_INT, &count));
    CHECK(count == 3 && back.MPI_SOURCE == left && back.MPI_TAG == 40 + left, "round trip: count %d source %d tag %d", count,
          back.MPI_SOURCE, back.MPI_TAG);

    /* Every MPI_T error class has a string of its own. */
    int tclasses[] = {MPI_T_ERR_MEMORY, MPI_T_ERR_NOT_INITIALIZED, MPI_T_ERR_CANNOT_INIT, MPI_T_ERR_INVALID_INDEX,
                      MPI_T_ERR_INVALID_ITEM, MPI_T_ERR_INVALID_HANDLE, MPI_T_ERR_OUT_OF_HANDLES,
                      MPI_T_ERR_OUT_OF_SESSIONS, MPI_T_ERR_INVALID_SESSION, MPI_T_ERR_CVAR_SET_NOT_NOW,
                      MPI_T_ERR_CVAR_SET_NEVER, MPI_T_ERR_PVAR_NO_STARTSTOP, MPI_T_ERR_PVAR_NO_WRITE,
                      MPI_T_ERR_PVAR_NO_ATOMIC, MPI_T_ERR_INVALID_NAME, MPI_T_ERR_INVALID};
    enum { NT = sizeof tclasses / sizeof tclasses[0] };
    static char texts[NT][MPI_MAX_ERROR_STRING];
    for (int i = 0; i < NT; i++) {
        int len;
        MPI_OK(MPI_Error_string(tclasses[i], texts[i], &len));
        CHECK(len > 0, "MPI_T class %d has an empty string", tclasses[i]);
        for (int j = 0; j < i; j++)
            CHECK(strcmp(texts[i], texts[j]) != 0, "MPI_T classes %d and %d share the string \"%s\"", tclasses[i], tclasses[j], texts[i]);
    }
    MPI_Finalize();
    if (rank == 0)
        printf("mpi4_tool_status: OK\n");
    return 0;
}
