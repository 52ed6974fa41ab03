import PropertyList

/// The `FormatVersion` of a file's top-level dictionary (the registry, the
/// journal, a backup manifest), checked the same way for each: present,
/// at least 1, and no newer than this code reads.
///
/// - Parameters:
///   - top: the file's top-level dictionary.
///   - supported: the newest version this code reads.
///   - tooNew: the error for a newer version, given the version found
///     (clamped to `Int`) and `supported`.
///   - damaged: the error for a missing or invalid version, given the reason.
/// - Returns: the version found.
public func checkedFormatVersion(in top: [PlistKey: PlistValue], supported: Int,
                          tooNew: (_ found: Int, _ supported: Int) -> ContainersError,
                          damaged: (String) -> ContainersError) throws(ContainersError) -> Int128 {
    guard case .integer(let version)? = top["FormatVersion"] else { throw damaged("FormatVersion is missing") }
    if version > Int128(supported) { throw tooNew(version > Int128(Int.max) ? Int.max : Int(version), supported) }
    guard version >= 1 else { throw damaged("FormatVersion \(version) is not valid") }
    return version
}
