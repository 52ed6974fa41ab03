// prefsbench: load for prefsd (see PrefsBench).
#if canImport(Glibc)
import Glibc
#endif
import Benchmarks

exit(PrefsBench.main(Array(CommandLine.arguments.dropFirst())))
