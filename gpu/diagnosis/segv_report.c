/* LD_PRELOAD'ed by gpu/inductor_cpu_diagnosis.py: on SIGSEGV, print where it happened before the process dies.
 * The faulting address, the instruction pointer, the word at the top of the stack (the return address when the
 * fault is a call through a null function pointer) and the shared object each of those falls in. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <ucontext.h>
#include <unistd.h>

static void name_of(const char *what, uintptr_t address) {
    Dl_info info;
    if (address && dladdr((void *)address, &info) && info.dli_fname) {
        fprintf(stderr, "segv-report: %s 0x%lx in %s+0x%lx (%s)\n", what, (unsigned long)address, info.dli_fname,
                (unsigned long)(address - (uintptr_t)info.dli_fbase), info.dli_sname ? info.dli_sname : "?");
    } else {
        fprintf(stderr, "segv-report: %s 0x%lx in no loaded object\n", what, (unsigned long)address);
    }
}

static void on_segv(int sig, siginfo_t *si, void *context) {
    ucontext_t *uc = (ucontext_t *)context;
    uintptr_t ip = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
    uintptr_t sp = (uintptr_t)uc->uc_mcontext.gregs[REG_RSP];
    fprintf(stderr, "segv-report: signal %d, fault address 0x%lx\n", sig, (unsigned long)si->si_addr);
    name_of("instruction pointer", ip);
    name_of("return address at the stack top", sp ? *(uintptr_t *)sp : 0);
    fflush(stderr);
    _exit(128 + sig);
}

__attribute__((constructor)) static void install(void) {
    static char stack[1 << 16];
    stack_t alt = {.ss_sp = stack, .ss_size = sizeof stack, .ss_flags = 0};
    sigaltstack(&alt, NULL);
    struct sigaction action = {0};
    action.sa_sigaction = on_segv;
    action.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigaction(SIGSEGV, &action, NULL);
}
