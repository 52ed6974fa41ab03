/// A hybrid logical clock reading: wall-clock milliseconds since 1970 and a
/// counter that orders events within one millisecond (or while the wall
/// clock is behind a time already seen).
///
/// A machine's next reading is always greater than every reading it has
/// written or merged, so a write made after seeing a remote change wins
/// over it even when the two machines' clocks disagree.
public struct HybridTime: Comparable, Hashable, Sendable, CustomStringConvertible {
    /// The largest time a log may carry (2^53 ms, about 285,000 years):
    /// a reading beyond it is hostile.
    public static let maximumMilliseconds: Int64 = 1 << 53
    /// The largest counter a log may carry.
    public static let maximumCounter: Int64 = 1 << 31
    /// How far ahead of this machine's wall clock a peer's reading may be for
    /// a merge to take it (5 minutes; CockroachDB and the HLC paper call it
    /// the maximum offset). A change stamped further ahead is left for a later
    /// pass (skipped, with a warning naming its device): a clock set in the
    /// year 9999, or a hostile log stamped with the largest reading the
    /// format allows, can no longer pin every machine's clock there.
    public static let maximumOffsetMilliseconds: Int64 = 5 * 60 * 1000

    public var milliseconds: Int64
    public var counter: Int64

    public init(milliseconds: Int64, counter: Int64) {
        self.milliseconds = milliseconds
        self.counter = counter
    }

    public static let zero = HybridTime(milliseconds: 0, counter: 0)

    public static func < (a: HybridTime, b: HybridTime) -> Bool {
        (a.milliseconds, a.counter) < (b.milliseconds, b.counter)
    }

    /// The reading after `self` at wall time `wall` (milliseconds), always one a
    /// log can hold: past ``maximumCounter`` the time moves on a millisecond.
    /// `nil` only when `self` is the largest reading a log may carry.
    public func next(wall: Int64) -> HybridTime? {
        if wall > milliseconds, wall <= Self.maximumMilliseconds { return HybridTime(milliseconds: wall, counter: 0) }
        if counter < Self.maximumCounter { return HybridTime(milliseconds: milliseconds, counter: counter + 1) }
        if milliseconds < Self.maximumMilliseconds { return HybridTime(milliseconds: milliseconds + 1, counter: 0) }
        return nil
    }

    /// Whether a peer's reading may be merged at wall time `wall`: no more than
    /// ``maximumOffsetMilliseconds`` ahead of it.
    public func isAcceptable(atWall wall: Int64) -> Bool {
        milliseconds <= wall &+ Self.maximumOffsetMilliseconds
    }

    /// Whether the reading is within the bounds a log may carry.
    public var isValid: Bool {
        milliseconds >= 0 && milliseconds <= Self.maximumMilliseconds && counter >= 0 && counter <= Self.maximumCounter
    }

    public var description: String { "\(milliseconds).\(counter)" }
}

/// What orders two changes of one key: the clock reading, then the
/// writing device's identifier (by its bytes), so that two writes with one
/// reading still have the same winner on every machine.
public struct ChangeStamp: Comparable, Hashable, Sendable, CustomStringConvertible {
    public var time: HybridTime
    public var device: String

    public init(time: HybridTime, device: String) {
        self.time = time
        self.device = device
    }

    public static func < (a: ChangeStamp, b: ChangeStamp) -> Bool {
        if a.time != b.time { return a.time < b.time }
        return Array(a.device.utf8).lexicographicallyPrecedes(Array(b.device.utf8))
    }

    public var description: String { "\(time)@\(device)" }
}
