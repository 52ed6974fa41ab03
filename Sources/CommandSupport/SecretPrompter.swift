#if canImport(Glibc)
import Glibc
#endif
import Keychain

/// Where `security` gets a new secret, and `apphome` a backup password,
/// when it is not piped in: a prompt on the terminal with echo off. Tests
/// pass their own.
public protocol SecretPrompter: AnyObject {
    /// Shows `prompt` and reads one line without echo, or `nil` when there
    /// is no terminal.
    func readSecret(prompt: String) -> SecureBytes?
}

/// Prompts on `/dev/tty` with echo off (like `getpass`), reading into
/// secure memory.
public final class TerminalPrompter: SecretPrompter {
    public init() {}

    public func readSecret(prompt: String) -> SecureBytes? {
        let fd = open("/dev/tty", O_RDWR | O_CLOEXEC | O_NOCTTY)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var saved = termios()
        guard tcgetattr(fd, &saved) == 0 else { return nil }
        var quiet = saved
        quiet.c_lflag &= ~tcflag_t(ECHO)
        _ = prompt.withCString { write(fd, $0, strlen($0)) }
        _ = tcsetattr(fd, TCSAFLUSH, &quiet)
        defer {
            _ = tcsetattr(fd, TCSAFLUSH, &saved)
            _ = write(fd, "\n", 1)
        }
        let line = SecureBytes.random(count: 4096)
        var count = 0
        var byte: UInt8 = 0
        while count < 4096 {
            let n = read(fd, &byte, 1)
            if n < 0 && errno == EINTR { continue }
            if n <= 0 || byte == 0x0A { break }
            line.storeByte(byte, at: count)
            count += 1
        }
        byte = 0
        return line.prefix(count)
    }
}
