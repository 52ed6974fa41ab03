import PropertyList

/// A named value for table-driven tests; the name is what the test report shows.
struct Sample: Sendable, CustomStringConvertible {
    var name: String
    var value: PlistValue
    var description: String { name }

    init(_ name: String, _ value: PlistValue) {
        self.name = name
        self.value = value
    }
}

/// Whether two values are the same down to the bits of every real and
/// date (so `-0.0` differs from `0.0`); NaNs match any NaN because text
/// formats carry no payload.
func identical(_ a: PlistValue, _ b: PlistValue) -> Bool {
    switch (a, b) {
    case (.real(let x), .real(let y)):
        return (x.isNaN && y.isNaN) || x.bitPattern == y.bitPattern
    case (.date(let x), .date(let y)):
        let (s, t) = (x.secondsSinceReferenceDate, y.secondsSinceReferenceDate)
        return (s.isNaN && t.isNaN) || s.bitPattern == t.bitPattern
    case (.array(let x), .array(let y)):
        return x.count == y.count && zip(x, y).allSatisfy { identical($0, $1) }
    case (.dictionary(let x), .dictionary(let y)):
        return x.count == y.count && x.allSatisfy { key, value in y[key].map { identical(value, $0) } ?? false }
    default:
        return a == b
    }
}

/// `value` with every date rounded down to a whole second, as XML plists
/// carry dates.
func wholeSecondDates(_ value: PlistValue) -> PlistValue {
    switch value {
    case .date(let d):
        return .date(PlistDate(secondsSinceReferenceDate: d.secondsSinceReferenceDate.rounded(.down)))
    case .array(let items):
        return .array(items.map(wholeSecondDates))
    case .dictionary(let entries):
        return .dictionary(entries.mapValues(wholeSecondDates))
    default:
        return value
    }
}

/// `value` wrapped in `depth` nested arrays, built without recursion.
func nestedArrays(depth: Int, innermost: PlistValue = .integer(1)) -> PlistValue {
    var v = innermost
    for _ in 0..<depth { v = .array([v]) }
    return v
}

/// Assembles a binary plist from raw object bytes, so tests can build
/// files our writer would never produce.
///
/// - Parameters:
///   - objects: each object's bytes, marker first; references inside them
///     must already use `refSize` bytes.
///   - top: the top object's number.
func assembleBinary(_ objects: [[UInt8]], top: Int = 0, refSize: Int = 1) -> [UInt8] {
    var out = Array("bplist00".utf8)
    var offsets: [Int] = []
    for object in objects {
        offsets.append(out.count)
        out += object
    }
    let tableStart = out.count
    let offsetSize = tableStart < 256 ? 1 : tableStart < 65536 ? 2 : 4
    for o in offsets { out += bigEndian(UInt64(o), size: offsetSize) }
    out += [0, 0, 0, 0, 0, 0, UInt8(offsetSize), UInt8(refSize)]
    out += bigEndian(UInt64(objects.count), size: 8)
    out += bigEndian(UInt64(top), size: 8)
    out += bigEndian(UInt64(tableStart), size: 8)
    return out
}

func bigEndian(_ v: UInt64, size: Int) -> [UInt8] {
    (0..<size).map { UInt8(truncatingIfNeeded: v >> UInt64(8 * (size - 1 - $0))) }
}

/// A string's bytes, for building fixtures.
func ascii(_ s: String) -> [UInt8] { Array(s.utf8) }
