import CommandSupport
import Keychain

extension Console {
    /// Standard input as one secret: its bytes without a final line end
    /// (`\n` or `\r\n`), copied to secure memory, the buffer wiped.
    func readSecretLine() -> SecureBytes {
        var bytes = readStandardInput()
        defer { SecureBytes.wipe(&bytes) }
        var n = bytes.count
        if n > 0 && bytes[n - 1] == 0x0A { n -= 1; if n > 0 && bytes[n - 1] == 0x0D { n -= 1 } }
        return bytes.withUnsafeBytes { SecureBytes(copying: UnsafeRawBufferPointer(rebasing: $0[0..<n])) }
    }
}
