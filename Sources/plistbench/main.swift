// plistbench: times the binary plist codec (see PlistBench).
#if canImport(Glibc)
import Glibc
#endif
import Benchmarks

exit(PlistBench.main(CommandLine.arguments))
