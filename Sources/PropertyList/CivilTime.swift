#if canImport(Glibc)
import Glibc
#endif

/// A calendar date and time of day in UTC, converted to and from seconds
/// without the C library, so that years far outside `time_t`'s comfortable
/// range (and before 1970) convert exactly.
///
/// Uses Core Foundation's calendar: Gregorian from 1582-10-15, the day the
/// Gregorian calendar began, and Julian before it (so 1582-10-04 is the
/// day before 1582-10-15, and `NSDate.distantPast` is 0001-01-01). Years
/// are astronomical: year 0 is 1 BC, -1 is 2 BC. Fields that name a date
/// before 1582-10-15 are read as Julian, including the ten days that
/// neither calendar has (1582-10-05 to 10-14), as a lenient calendar reads
/// them (not checked against a Mac).
public struct CivilTime: Equatable, Sendable {
    public var year: Int
    public var month: Int  // 1...12
    public var day: Int    // 1...31
    public var hour: Int
    public var minute: Int
    public var second: Int
    /// The fractional part of the second, in `0 ..< 1`.
    public var fraction: Double

    /// Days from 1970-01-01 to 1582-10-15, the first Gregorian day.
    static let gregorianStart = -141_427

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
        (year, month, day) = days >= Self.gregorianStart ? Self.gregorianFields(days) : Self.julianFields(days)
    }

    /// Whether the fields name a real calendar date and time of day.
    public var isValid: Bool {
        guard (1...12).contains(month), (0...23).contains(hour), (0...59).contains(minute), (0...60).contains(second) else { return false }
        let leap = isJulian ? Self.floorMod(year, 4) == 0 : CivilTime.isLeap(year)
        let lengths = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
        return (1...lengths[month - 1]).contains(day)
    }

    static func isLeap(_ y: Int) -> Bool { (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 }

    /// Whether the fields fall before 1582-10-15 and so name a Julian date.
    private var isJulian: Bool {
        (year, month, day) < (1582, 10, 15)
    }

    /// The date these fields name, in UTC.
    public var date: PlistDate {
        let days = isJulian ? Self.julianDays(year, month, day) : Self.gregorianDays(year, month, day)
        let secs = Double(days) * 86_400 + Double(hour * 3600 + minute * 60 + second)
        return PlistDate(secondsSince1970: secs + fraction)
    }

    // MARK: - Day arithmetic (days from 1970-01-01)

    private static func floorDiv(_ a: Int, _ b: Int) -> Int { a >= 0 ? a / b : -((-a + b - 1) / b) }
    private static func floorMod(_ a: Int, _ b: Int) -> Int { a - floorDiv(a, b) * b }

    /// Proleptic Gregorian year, month and day of a day number.
    private static func gregorianFields(_ days: Int) -> (Int, Int, Int) {
        let z = days + 719_468
        let era = floorDiv(z, 146_097)
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = doy - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    private static func gregorianDays(_ year: Int, _ month: Int, _ day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = floorDiv(y, 400)
        let yoe = y - era * 400
        let mp = month > 2 ? month - 3 : month + 9
        let doy = (153 * mp + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    /// Julian year, month and day of a day number: the Gregorian algorithm
    /// with four-year cycles of 1,461 days and no century rule.
    private static func julianFields(_ days: Int) -> (Int, Int, Int) {
        // Day 0 of the shifted count is Julian 0000-03-01.
        let z = days + 719_470
        let cycle = floorDiv(z, 1461)
        let doc = z - cycle * 1461                  // 0...1460
        let yoc = min(doc / 365, 3)                 // the leap day is the cycle's last
        let doy = doc - 365 * yoc
        let mp = (5 * doy + 2) / 153
        let day = doy - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (cycle * 4 + yoc + (month <= 2 ? 1 : 0), month, day)
    }

    private static func julianDays(_ year: Int, _ month: Int, _ day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let cycle = floorDiv(y, 4)
        let yoc = y - cycle * 4
        let mp = month > 2 ? month - 3 : month + 9
        let doy = (153 * mp + 2) / 5 + day - 1
        return cycle * 1461 + yoc * 365 + doy - 719_470
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
