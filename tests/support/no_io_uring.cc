// no_io_uring PROGRAM [ARGS...]: runs PROGRAM as on a kernel without io_uring. A seccomp filter
// (seccomp(2), SECCOMP_RET_ERRNO; kept across execve(2)) makes io_uring_setup(2) fail with ENOSYS,
// so the e2e tests can check what `--io uring` says there without touching the host's
// kernel.io_uring_disabled. Exit 77 (ctest's skip) where the filter cannot be installed.
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <cstring>

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: no_io_uring PROGRAM [ARGS...]\n");
    return 2;
  }
#if defined(__x86_64__)
  constexpr unsigned kArch = AUDIT_ARCH_X86_64;
#elif defined(__aarch64__)
  constexpr unsigned kArch = AUDIT_ARCH_AARCH64;
#else
  std::fprintf(stderr, "no_io_uring: no seccomp filter for this architecture\n");
  return 77;
#endif
  sock_filter filter[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, arch)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, kArch, 1, 0),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_io_uring_setup, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (ENOSYS & SECCOMP_RET_DATA)),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  sock_fprog program{static_cast<unsigned short>(sizeof(filter) / sizeof(filter[0])), filter};
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
      syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &program) != 0) {
    std::fprintf(stderr, "no_io_uring: seccomp: %s\n", std::strerror(errno));
    return 77;
  }
  execv(argv[1], argv + 1);
  std::fprintf(stderr, "no_io_uring: %s: %s\n", argv[1], std::strerror(errno));
  return 127;
}
