/* tcp_floor: what TCP over loopback costs on this machine without any MPI, the floor of
 * an MPI's TCP transport: two processes (fork), one connection with TCP_NODELAY,
 * nonblocking send/recv retried at once on EAGAIN (busy polling, as MPI progress engines
 * do: a blocking recv here costs a scheduler wake-up, ~30 us on this VM, per message).
 *   latency: half the round trip of a ping-pong, per size (8 B, 64 KiB, 1 MiB)
 *   bw:      one side streams 1 MiB messages (a window of 64), the other reads them and
 *            answers one byte at the end, as osu_bw does.
 * Output lines: "latency <bytes> <us>" and "bw <bytes> <MB/s>". No MPI.
 * Across two hosts: `tcp_floor -s PORT` on one (serves one run), `tcp_floor -c HOST PORT`
 * on the other (prints the lines): the same exchange over the network. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netdb.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static void xfer(int fd, char *buf, size_t n, int out)
{
    while (n > 0) {
        ssize_t k = out ? send(fd, buf, n, MSG_NOSIGNAL | MSG_DONTWAIT) : recv(fd, buf, n, MSG_DONTWAIT);
        if (k < 0 && errno == EAGAIN)
            continue;
        if (k <= 0) {
            perror(out ? "send" : "recv");
            exit(1);
        }
        buf += k;
        n -= (size_t)k;
    }
}

int main(int argc, char **argv)
{
    const size_t sizes[] = {8, 65536, 1 << 20};
    const int iters[] = {20000, 2000, 200};
    const size_t big = 1 << 20;
    const int window = 64, bw_loops = 20;
    char *buf = malloc(big);
    memset(buf, 1, big);
    int ls = socket(AF_INET, SOCK_STREAM, 0), one = 1;
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t alen = sizeof a;
    /* -s PORT: serve one run on PORT (the side a fork would be); -c HOST PORT: run it. */
    int serve = argc == 3 && strcmp(argv[1], "-s") == 0, client = argc == 4 && strcmp(argv[1], "-c") == 0;
    if (argc > 1 && !serve && !client) {
        fprintf(stderr, "usage: tcp_floor [-s PORT | -c HOST PORT]\n");
        return 2;
    }
    if (serve) {
        a.sin_addr.s_addr = htonl(INADDR_ANY);
        a.sin_port = htons((unsigned short)atoi(argv[2]));
        setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    }
    if (client) {
        struct hostent *h = gethostbyname(argv[2]);
        if (!h) {
            fprintf(stderr, "tcp_floor: unknown host %s\n", argv[2]);
            return 1;
        }
        memcpy(&a.sin_addr, h->h_addr_list[0], 4);
        a.sin_port = htons((unsigned short)atoi(argv[3]));
    } else if (bind(ls, (struct sockaddr *)&a, sizeof a) || listen(ls, 1) || getsockname(ls, (struct sockaddr *)&a, &alen)) {
        perror("listen");
        return 1;
    }
    /* `child` is 0 on the side that connects and echoes, as after the fork. */
    pid_t child = serve ? 0 : client ? 1 : fork();
    int fd;
    if (serve) {
        fd = accept(ls, NULL, NULL);
    } else if (client) {
        fd = socket(AF_INET, SOCK_STREAM, 0);
        for (int tries = 0; connect(fd, (struct sockaddr *)&a, sizeof a); tries++) {
            if (tries == 200) {
                perror("connect");
                return 1;
            }
            close(fd);
            fd = socket(AF_INET, SOCK_STREAM, 0);
            usleep(10000);
        }
    } else if (child == 0) {
        fd = socket(AF_INET, SOCK_STREAM, 0);
        if (connect(fd, (struct sockaddr *)&a, sizeof a)) {
            perror("connect");
            return 1;
        }
    } else {
        fd = accept(ls, NULL, NULL);
    }
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    for (int s = 0; s < 3; s++) {
        double t0 = 0;
        for (int i = -iters[s] / 10; i < iters[s]; i++) {
            if (i == 0)
                t0 = now();
            if (child) {
                xfer(fd, buf, sizes[s], 1);
                xfer(fd, buf, sizes[s], 0);
            } else {
                xfer(fd, buf, sizes[s], 0);
                xfer(fd, buf, sizes[s], 1);
            }
        }
        if (child)
            printf("latency %zu %.2f\n", sizes[s], (now() - t0) * 1e6 / (2.0 * iters[s]));
    }
    double t0 = 0;
    for (int l = -2; l < bw_loops; l++) {
        if (l == 0)
            t0 = now();
        for (int w = 0; w < window; w++)
            xfer(fd, buf, big, child != 0);
        xfer(fd, buf, 1, child == 0);
    }
    if (child) {
        printf("bw %zu %.2f\n", big, (double)big * window * bw_loops / (now() - t0) / 1e6);
        if (!client)
            waitpid(child, NULL, 0);
    }
    close(fd);
    return 0;
}
