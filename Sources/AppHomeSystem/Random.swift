/// Random bytes and identifiers from the kernel's generator (`getrandom`).
public enum Random {
    /// `count` random bytes.
    public static func bytes(_ count: Int) -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        return (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
    }

    /// A random (version 4) UUID in upper case, `8-4-4-4-12` hex digits.
    public static func uuid() -> String {
        var b = bytes(16)
        b[6] = (b[6] & 0x0F) | 0x40
        b[8] = (b[8] & 0x3F) | 0x80
        let hex = Hex.encode(b, uppercase: true)
        let u = Array(hex)
        return String(u[0..<8]) + "-" + String(u[8..<12]) + "-" + String(u[12..<16]) + "-" + String(u[16..<20]) + "-" + String(u[20..<32])
    }

    /// `count` characters from `[A-Za-z0-9]`, for temporary file names.
    public static func alphanumeric(_ count: Int) -> String {
        let alphabet = Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
        return String(bytes(count).map { alphabet[Int($0) % alphabet.count] })
    }
}
