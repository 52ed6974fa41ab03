extension PlistValue {
    /// Where in this value the first date that is not a finite number of
    /// seconds (`inf`, `-inf`, `nan`) is, as a key path (`a.b.0`), with
    /// that date; `nil` when every date is finite.
    ///
    /// A binary property list can hold such a date, but it has no calendar
    /// form: XML, JSON and `defaults read` could never print it. Writers
    /// refuse it (see `DomainCommit`).
    public func firstNonFiniteDate(at path: String = "") -> (path: String, seconds: Double)? {
        switch self {
        case .date(let d):
            return d.secondsSinceReferenceDate.isFinite ? nil : (path, d.secondsSinceReferenceDate)
        case .array(let items):
            for (i, item) in items.enumerated() {
                if let found = item.firstNonFiniteDate(at: path.isEmpty ? "\(i)" : "\(path).\(i)") { return found }
            }
            return nil
        case .dictionary(let entries):
            for key in entries.keys.sorted() {
                if let found = entries[key]!.firstNonFiniteDate(at: path.isEmpty ? key.string : "\(path).\(key)") { return found }
            }
            return nil
        default:
            return nil
        }
    }
}
