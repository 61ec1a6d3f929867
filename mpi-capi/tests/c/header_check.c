/* Compile-only check of OxMPI's generated mpi.h: constants, typed handles in switch labels
   and static initialisers, callback types, sentinels, and a few prototypes. Built by
   mpi-capi/tests/header.rs with gcc (C99, -pedantic) and g++. */
#include <mpi.h>

static MPI_Datatype table[] = {
    MPI_CHAR, MPI_SIGNED_CHAR, MPI_UNSIGNED_CHAR, MPI_BYTE, MPI_WCHAR, MPI_SHORT,
    MPI_UNSIGNED_SHORT, MPI_INT, MPI_UNSIGNED, MPI_LONG, MPI_UNSIGNED_LONG, MPI_FLOAT,
    MPI_DOUBLE, MPI_LONG_DOUBLE, MPI_LONG_LONG_INT, MPI_UNSIGNED_LONG_LONG, MPI_LONG_LONG,
    MPI_PACKED, MPI_LB, MPI_UB, MPI_FLOAT_INT, MPI_DOUBLE_INT, MPI_LONG_INT, MPI_SHORT_INT,
    MPI_2INT, MPI_LONG_DOUBLE_INT, MPI_COMPLEX, MPI_DOUBLE_COMPLEX, MPI_LOGICAL, MPI_REAL,
    MPI_DOUBLE_PRECISION, MPI_INTEGER, MPI_2INTEGER, MPI_2REAL, MPI_2DOUBLE_PRECISION,
    MPI_CHARACTER, MPI_REAL4, MPI_REAL8, MPI_REAL16, MPI_COMPLEX8, MPI_COMPLEX16,
    MPI_COMPLEX32, MPI_INTEGER1, MPI_INTEGER2, MPI_INTEGER4, MPI_INTEGER8, MPI_INTEGER16,
    MPI_INT8_T, MPI_INT16_T, MPI_INT32_T, MPI_INT64_T, MPI_UINT8_T, MPI_UINT16_T,
    MPI_UINT32_T, MPI_UINT64_T, MPI_C_BOOL, MPI_C_COMPLEX, MPI_C_FLOAT_COMPLEX,
    MPI_C_DOUBLE_COMPLEX, MPI_C_LONG_DOUBLE_COMPLEX, MPI_AINT, MPI_OFFSET, MPI_COUNT,
    MPI_CXX_BOOL, MPI_CXX_FLOAT_COMPLEX, MPI_CXX_DOUBLE_COMPLEX, MPI_CXX_LONG_DOUBLE_COMPLEX,
    MPI_DATATYPE_NULL,
};
static const MPI_Comm comms[] = { MPI_COMM_WORLD, MPI_COMM_SELF, MPI_COMM_NULL };
static const MPI_Op ops[] = { MPI_MAX, MPI_MIN, MPI_SUM, MPI_PROD, MPI_LAND, MPI_BAND, MPI_LOR,
    MPI_BOR, MPI_LXOR, MPI_BXOR, MPI_MINLOC, MPI_MAXLOC, MPI_REPLACE, MPI_NO_OP, MPI_OP_NULL };
static const MPI_Errhandler ehs[] = { MPI_ERRORS_ARE_FATAL, MPI_ERRORS_RETURN, MPI_ERRORS_ABORT,
    MPI_ERRHANDLER_NULL };
static const int misc[] = { MPI_GROUP_EMPTY, MPI_GROUP_NULL, MPI_INFO_NULL, MPI_INFO_ENV,
    MPI_WIN_NULL, MPI_REQUEST_NULL, MPI_MESSAGE_NULL, MPI_MESSAGE_NO_PROC, MPI_TAG_UB, MPI_HOST,
    MPI_IO, MPI_WTIME_IS_GLOBAL, MPI_UNIVERSE_SIZE, MPI_LASTUSEDCODE, MPI_APPNUM, MPI_WIN_BASE,
    MPI_WIN_SIZE, MPI_WIN_DISP_UNIT, MPI_WIN_CREATE_FLAVOR, MPI_WIN_MODEL, MPI_KEYVAL_INVALID,
    MPI_UNDEFINED, MPI_PROC_NULL, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_ROOT, MPI_IDENT,
    MPI_CONGRUENT, MPI_SIMILAR, MPI_UNEQUAL, MPI_GRAPH, MPI_CART, MPI_DIST_GRAPH,
    MPI_COMBINER_NAMED, MPI_COMBINER_HINDEXED_BLOCK, MPI_ORDER_C, MPI_ORDER_FORTRAN,
    MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_CYCLIC, MPI_DISTRIBUTE_NONE, MPI_DISTRIBUTE_DFLT_DARG,
    MPI_MODE_NOCHECK, MPI_MODE_NOSTORE, MPI_MODE_NOPUT, MPI_MODE_NOPRECEDE, MPI_MODE_NOSUCCEED,
    MPI_LOCK_EXCLUSIVE, MPI_LOCK_SHARED, MPI_WIN_FLAVOR_CREATE, MPI_WIN_FLAVOR_SHARED,
    MPI_WIN_SEPARATE, MPI_WIN_UNIFIED, MPI_THREAD_SINGLE, MPI_THREAD_MULTIPLE,
    MPI_MAX_PROCESSOR_NAME, MPI_MAX_ERROR_STRING, MPI_MAX_PORT_NAME, MPI_MAX_OBJECT_NAME,
    MPI_MAX_INFO_KEY, MPI_MAX_INFO_VAL, MPI_MAX_LIBRARY_VERSION_STRING, MPI_MAX_DATAREP_STRING,
    MPI_TYPECLASS_REAL, MPI_TYPECLASS_INTEGER, MPI_TYPECLASS_COMPLEX, MPI_COMM_TYPE_SHARED,
    MPI_COMM_TYPE_HW_GUIDED, MPI_COMM_TYPE_HW_UNGUIDED,
    MPI_MODE_RDONLY, MPI_MODE_RDWR, MPI_MODE_WRONLY, MPI_MODE_CREATE, MPI_MODE_EXCL,
    MPI_MODE_DELETE_ON_CLOSE, MPI_MODE_UNIQUE_OPEN, MPI_MODE_APPEND, MPI_MODE_SEQUENTIAL,
    MPI_SEEK_SET, MPI_SEEK_CUR, MPI_SEEK_END, MPI_BSEND_OVERHEAD, MPI_SUCCESS, MPI_ERR_OTHER,
    MPI_ERR_LASTCODE, MPI_ERR_RMA_FLAVOR, MPI_T_ERR_INVALID, MPI_T_VERBOSITY_USER_BASIC,
    MPI_T_BIND_NO_OBJECT, MPI_T_SCOPE_CONSTANT, MPI_T_PVAR_CLASS_STATE, MPI_F_STATUS_SIZE };
static const MPI_Offset disp_current = MPI_DISPLACEMENT_CURRENT;

#if MPI_VERSION != 4 || MPI_SUBVERSION != 0
#error "mpi.h must declare MPI 4.0"
#endif

static const char *type_name(MPI_Datatype t)
{
    switch (t) {
    case MPI_INT: return "int";
    case MPI_DOUBLE: return "double";
    case MPI_FLOAT_INT: return "float_int";
    case MPI_LONG_DOUBLE_INT: return "long_double_int";
    case MPI_C_BOOL: return "bool";
    case MPI_DATATYPE_NULL: return "null";
    default: return "other";
    }
}

static int copy_cb(MPI_Comm c, int k, void *e, void *in, void *out, int *flag)
{
    (void)c; (void)k; (void)e; *(void **)out = in; *flag = 1; return MPI_SUCCESS;
}

static void reduce_cb(void *in, void *inout, int *len, MPI_Datatype *t)
{
    (void)in; (void)inout; (void)len; (void)t;
}

static void errh_cb(MPI_Comm *c, int *code, ...) { (void)c; (void)code; }

int header_check(int argc, char **argv);
int header_check(int argc, char **argv)
{
    MPI_Status st;
    MPI_Status sts[2];
    MPI_Request req = MPI_REQUEST_NULL;
    MPI_Request reqs[2] = { MPI_REQUEST_NULL, MPI_REQUEST_NULL };
    MPI_Comm_copy_attr_function *copy = copy_cb;
    MPI_Comm_delete_attr_function *del = MPI_COMM_NULL_DELETE_FN;
    MPI_User_function *uf = reduce_cb;
    MPI_Comm_errhandler_function *ef = errh_cb;
    MPI_Handler_function *hf = errh_cb;
    MPI_File fh = MPI_FILE_NULL;
    MPI_Aint a = 0;
    MPI_Count cnt = 0;
    MPI_Fint f[MPI_F_STATUS_SIZE];
    MPI_T_pvar_session ses = MPI_T_PVAR_SESSION_NULL;
    int key, flag, ranges[1][3] = { { 0, 0, 1 } };
    MPI_Group g;
    MPI_Comm inter;
    MPI_Op op;
    MPI_Errhandler eh;
    double t;

    MPI_Init(&argc, &argv);
    t = MPI_Wtime() + MPI_Wtick();
    MPI_Comm_create_keyval(copy, del, &key, NULL);
    MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, &key, NULL);
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &key, NULL);
    MPI_Type_create_keyval(MPI_TYPE_DUP_FN, MPI_TYPE_NULL_DELETE_FN, &key, NULL);
    MPI_Win_create_keyval(MPI_WIN_DUP_FN, MPI_WIN_NULL_DELETE_FN, &key, NULL);
    MPI_Keyval_create(MPI_DUP_FN, MPI_NULL_DELETE_FN, &key, NULL);
    MPI_Keyval_create(MPI_NULL_COPY_FN, MPI_NULL_DELETE_FN, &key, NULL);
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &a, &flag);
    MPI_Op_create(uf, 1, &op);
    MPI_Comm_create_errhandler(ef, &eh);
    MPI_Errhandler_create(hf, &eh);
    MPI_Sendrecv(MPI_BOTTOM, 0, MPI_INT, MPI_PROC_NULL, 0, MPI_BOTTOM, 0, MPI_INT,
                 MPI_PROC_NULL, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Allreduce(MPI_IN_PLACE, &a, 1, MPI_AINT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Waitall(1, &req, MPI_STATUSES_IGNORE);
    MPI_Waitall(2, reqs, sts);
    MPI_Recv(&a, 1, MPI_AINT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
    MPI_Get_elements_x(&st, MPI_BYTE, &cnt);
    MPI_Comm_spawn("x", MPI_ARGV_NULL, 1, MPI_INFO_NULL, 0, MPI_COMM_SELF, &inter,
                   MPI_ERRCODES_IGNORE);
    MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 0, NULL, MPI_UNWEIGHTED, 0, NULL,
                                   MPI_WEIGHTS_EMPTY, MPI_INFO_NULL, 0, (MPI_Comm *)0);
    MPI_Group_range_incl(MPI_GROUP_EMPTY, 1, ranges, &g);
    MPI_Pcontrol(1, "extra", 2);
    MPI_Status_c2f(&st, f);
    MPI_Status_f2c(MPI_F_STATUS_IGNORE, &st);
    MPI_File_open(MPI_COMM_WORLD, "f", MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
    MPI_File_close(&fh);
    MPI_T_pvar_session_create(&ses);
    MPI_T_pvar_start(ses, MPI_T_PVAR_ALL_HANDLES);
    MPI_Register_datarep("x", MPI_CONVERSION_FN_NULL, MPI_CONVERSION_FN_NULL, NULL, NULL);
    a = MPI_Aint_add(a, MPI_Aint_diff(a, a));
    (void)MPI_Comm_c2f(MPI_Comm_f2c(0));
    (void)MPI_File_c2f(MPI_File_f2c(0));
    (void)PMPI_Send(NULL, 0, MPI_INT, 0, 0, MPI_COMM_WORLD);
    (void)table; (void)comms; (void)ops; (void)ehs; (void)misc; (void)disp_current; (void)t;
    (void)sizeof(MPI_F08_status);
    return type_name(MPI_INT)[0] + MPI_Finalize();
}
