#if canImport(Glibc)
import Glibc
#endif

/// Why a bench stopped: its message for stderr and its exit status.
struct BenchFailure: Error {
    var message: String
    var status: Int32

    init(_ message: String, status: Int32 = 1) {
        self.message = message
        self.status = status
    }

    /// Writes `<program>: <message>` to stderr; returns the exit status.
    func report(as program: String) -> Int32 {
        let line = Array("\(program): \(message)\n".utf8)
        _ = line.withUnsafeBytes { write(STDERR_FILENO, $0.baseAddress, $0.count) }
        return status
    }
}
