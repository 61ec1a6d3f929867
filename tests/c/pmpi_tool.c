/* A profiling tool (built as a shared library): defines MPI_Send, MPI_Isend and
 * MPI_Barrier, counts the calls, and forwards to the PMPI_ entry points. */
#include <mpi.h>

int pmpi_tool_sends, pmpi_tool_isends, pmpi_tool_barriers;

int MPI_Send(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm)
{
    pmpi_tool_sends++;
    return PMPI_Send(buf, count, dt, dest, tag, comm);
}

int MPI_Isend(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm, MPI_Request *req)
{
    pmpi_tool_isends++;
    return PMPI_Isend(buf, count, dt, dest, tag, comm, req);
}

int MPI_Barrier(MPI_Comm comm)
{
    pmpi_tool_barriers++;
    return PMPI_Barrier(comm);
}
