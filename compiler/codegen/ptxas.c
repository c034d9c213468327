/* PTX -> cubin through NVIDIA's ptxas (--emit=cubin and the test suite).
 * ptxas is found at $TLC_PTXAS, the build-time TLC_PTXAS, on PATH, or at
 * /usr/local/cuda/bin/ptxas. It runs through posix_spawn with an argv array
 * (no shell, so odd characters in paths are harmless), in a private mkdtemp
 * directory; its stdout+stderr are captured into the diagnostics. */
#include "codegen_internal.h"
#include "../support/read_file.h"
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

#ifndef TLC_PTXAS
#define TLC_PTXAS ""
#endif

static bool executable(const char *p) {
    struct stat st;
    return p && *p && stat(p, &st) == 0 && S_ISREG(st.st_mode) && access(p, X_OK) == 0;
}

static bool find_ptxas(char *out, size_t n) {
    const char *env = getenv("TLC_PTXAS");
    if (env && executable(env) && strlen(env) < n) { strcpy(out, env); return true; }
    const char *built = TLC_PTXAS;
    size_t bl = strlen(built);
    if (bl > 0 && !(bl >= 9 && strcmp(built + bl - 9, "-NOTFOUND") == 0) && executable(built) && bl < n) {
        strcpy(out, built);
        return true;
    }
    const char *path = getenv("PATH");
    while (path && *path) {
        const char *c = strchr(path, ':');
        size_t len = c ? (size_t)(c - path) : strlen(path);
        if (len > 0 && len + 7 < n) {
            snprintf(out, n, "%.*s/ptxas", (int)len, path);
            if (executable(out)) return true;
        }
        path = c ? c + 1 : NULL;
    }
    if (executable("/usr/local/cuda/bin/ptxas")) { snprintf(out, n, "%s", "/usr/local/cuda/bin/ptxas"); return true; }
    return false;
}

bool tlc_ptxas_available(void) {
    char p[PATH_MAX];
    return find_ptxas(p, sizeof p);
}

static bool write_file(const char *path, const char *data, size_t len) {
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) return false;
    size_t off = 0;
    while (off < len) {
        ssize_t w = write(fd, data + off, len - off);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) { close(fd); return false; }
        off += (size_t)w;
    }
    return close(fd) == 0;
}

/* ptxas output as diagnostics: first line in the message, the rest as notes. */
static void report_log(tlc_diag *diag, bool error, const char *head, const char *log) {
    if (error) tlc_error(diag, (tlc_loc){0, 0}, "%s", head);
    else tlc_warning(diag, (tlc_loc){0, 0}, "%s", head);
    int lines = 0;
    for (const char *p = log; p && *p && lines < 30; lines++) {
        const char *e = strchr(p, '\n');
        int len = e ? (int)(e - p) : (int)strlen(p);
        if (len > 0) tlc_note(diag, (tlc_loc){0, 0}, "ptxas: %.*s", len > 900 ? 900 : len, p);
        p = e ? e + 1 : NULL;
    }
}

unsigned char *tlc_ptxas_assemble(const char *ptx, tlc_arch arch, size_t *size, tlc_arena *a, tlc_diag *diag) {
    const tlc_loc nowhere = {0, 0};
    if (size) *size = 0;
    const char *cpu = cg_arch_cpu(arch);
    if (!cpu || !ptx) { tlc_error(diag, nowhere, "internal error: ptxas: bad arguments"); return NULL; }
    char exe[PATH_MAX];
    if (!find_ptxas(exe, sizeof exe)) {
        tlc_error(diag, nowhere, "ptxas not found: install the CUDA toolkit or set TLC_PTXAS=/path/to/ptxas");
        return NULL;
    }
    const char *tmp = getenv("TMPDIR");
    if (!tmp || !*tmp || strlen(tmp) > PATH_MAX - 64) tmp = "/tmp";
    char dir[PATH_MAX], in[PATH_MAX + 16], out[PATH_MAX + 16], log[PATH_MAX + 16];
    snprintf(dir, sizeof dir, "%s/tlc-ptxas-XXXXXX", tmp);
    if (!mkdtemp(dir)) {
        tlc_error(diag, nowhere, "cannot create a temporary directory in %s: %s", tmp, strerror(errno));
        return NULL;
    }
    snprintf(in, sizeof in, "%s/in.ptx", dir);
    snprintf(out, sizeof out, "%s/out.cubin", dir);
    snprintf(log, sizeof log, "%s/log.txt", dir);
    unsigned char *result = NULL;
    if (!write_file(in, ptx, strlen(ptx))) {
        tlc_error(diag, nowhere, "cannot write %s: %s", in, strerror(errno));
        goto cleanup;
    }
    char archopt[32];
    snprintf(archopt, sizeof archopt, "-arch=%s", cpu);
    char *argv[] = {exe, archopt, "-o", out, in, NULL};
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 2, log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    posix_spawn_file_actions_adddup2(&fa, 2, 1);
    pid_t pid;
    int rc = posix_spawn(&pid, exe, &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) {
        tlc_error(diag, nowhere, "cannot run %s: %s", exe, strerror(rc));
        goto cleanup;
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR) {
            tlc_error(diag, nowhere, "waiting for ptxas failed: %s", strerror(errno));
            goto cleanup;
        }
    }
    char *text = tlc_read_file(log, NULL);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        char head[128];
        if (WIFEXITED(status)) snprintf(head, sizeof head, "ptxas -arch=%s failed (exit status %d)", cpu, WEXITSTATUS(status));
        else snprintf(head, sizeof head, "ptxas -arch=%s was killed by signal %d", cpu, WIFSIGNALED(status) ? WTERMSIG(status) : 0);
        report_log(diag, true, head, text);
        free(text);
        goto cleanup;
    }
    if (text && *text) report_log(diag, false, "ptxas reported:", text);
    free(text);
    size_t n = 0;
    char *bin = tlc_read_file(out, &n);
    if (!bin || n == 0) {
        tlc_error(diag, nowhere, "ptxas produced no cubin");
        free(bin);
        goto cleanup;
    }
    result = tlc_arena_alloc(a, n);
    memcpy(result, bin, n);
    free(bin);
    if (size) *size = n;
cleanup:
    unlink(in);
    unlink(out);
    unlink(log);
    rmdir(dir);
    return result;
}
