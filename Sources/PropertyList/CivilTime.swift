#if canImport(Glibc)
import Glibc
#endif

/// A calendar date and time of day in UTC, converted to and from seconds
/// without the C library, so that years far outside `time_t`'s comfortable
/// range (and before 1970) convert exactly.
///
/// Uses the proleptic Gregorian calendar (days-from-civil algorithm).
public struct CivilTime: Equatable, Sendable {
    public var year: Int
    public var month: Int  // 1...12
    public var day: Int    // 1...31
    public var hour: Int
    public var minute: Int
    public var second: Int
    /// The fractional part of the second, in `0 ..< 1`.
    public var fraction: Double

    public init(year: Int, month: Int, day: Int, hour: Int = 0, minute: Int = 0, second: Int = 0, fraction: Double = 0) {
        self.year = year; self.month = month; self.day = day
        self.hour = hour; self.minute = minute; self.second = second; self.fraction = fraction
    }

    /// Breaks a date into UTC calendar fields. Returns `nil` for a date too
    /// far away to have a year that fits in an `Int` (or not finite).
    public init?(_ date: PlistDate) {
        let unix = date.secondsSince1970
        guard unix.isFinite, abs(unix) < 9.0e15 else { return nil }
        let whole = unix.rounded(.down)
        var secs = Int(whole)
        fraction = unix - whole
        var days = secs / 86_400
        secs -= days * 86_400
        if secs < 0 { secs += 86_400; days -= 1 }
        hour = secs / 3600
        minute = (secs % 3600) / 60
        second = secs % 60
        // civil_from_days
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        day = doy - (153 * mp + 2) / 5 + 1
        month = mp < 10 ? mp + 3 : mp - 9
        year = yoe + era * 400 + (month <= 2 ? 1 : 0)
    }

    /// Whether the fields name a real calendar date and time of day.
    public var isValid: Bool {
        guard (1...12).contains(month), (0...23).contains(hour), (0...59).contains(minute), (0...60).contains(second) else { return false }
        let lengths = [31, CivilTime.isLeap(year) ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
        return (1...lengths[month - 1]).contains(day)
    }

    static func isLeap(_ y: Int) -> Bool { (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 }

    /// The date these fields name, in UTC.
    public var date: PlistDate {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = month > 2 ? month - 3 : month + 9
        let doy = (153 * mp + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        let days = era * 146_097 + doe - 719_468
        let secs = Double(days) * 86_400 + Double(hour * 3600 + minute * 60 + second)
        return PlistDate(secondsSince1970: secs + fraction)
    }

    /// `YYYY-MM-DD HH:MM:SS +0000`, the form `defaults read` prints.
    public var descriptionFormat: String {
        "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2)) \(pad(hour, 2)):\(pad(minute, 2)):\(pad(second, 2)) +0000"
    }

    /// `YYYY-MM-DDTHH:MM:SSZ`, the ISO 8601 form XML plists use (whole seconds).
    public var iso8601: String {
        "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))T\(pad(hour, 2)):\(pad(minute, 2)):\(pad(second, 2))Z"
    }

    private func pad(_ n: Int, _ width: Int) -> String {
        let s = String(abs(n))
        let padded = s.count < width ? String(repeating: "0", count: width - s.count) + s : s
        return n < 0 ? "-" + padded : padded
    }
}
