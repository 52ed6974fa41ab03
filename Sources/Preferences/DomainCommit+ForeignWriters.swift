#if canImport(Glibc)
import Glibc
#endif
import PropertyList

extension DomainCommit {
    /// How often a domain that cannot be read is read again under the lock
    /// before the commit gives up, and how long (microseconds) it waits
    /// between reads.
    static let foreignWriteRetries = 20
    static let foreignWritePause: UInt32 = 5_000

    /// `load`, read again while the file cannot be parsed.
    ///
    /// Stock Foundation (an app started with `apphome launch`) writes a
    /// domain without AppHome's lock and in place: it truncates the file and
    /// writes the XML into it. A read in between sees an empty or cut-off
    /// file. Such a file is never overwritten (its keys would be lost), so
    /// the commit waits for the write to finish: up to
    /// ``foreignWriteRetries`` reads, ``foreignWritePause`` apart (about a
    /// tenth of a second), then the last error is thrown as before.
    static func loadSettled(_ load: (Domain, String) throws(PreferencesError) -> [PlistKey: PlistValue]?,
                            _ domain: Domain, _ path: String) throws(PreferencesError) -> [PlistKey: PlistValue]? {
        var attempt = 0
        while true {
            do { return try load(domain, path) } catch {
                guard case .unreadableDomain = error, attempt < foreignWriteRetries else { throw error }
                attempt += 1
                usleep(foreignWritePause)
            }
        }
    }
}
