#if canImport(Glibc)
import Glibc
#endif

/// Wall-clock time, injected wherever something is dated (tests pin it).
public enum SystemClock {
    /// Seconds since 1970-01-01 00:00:00 UTC, with sub-second precision.
    public static func secondsSince1970() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }

    /// Seconds on the monotonic clock (for timeouts; never goes back).
    public static func monotonicSeconds() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }
}
