import AppHomeSystem
import Preferences

/// The directories an app can ask for, with the raw values of Foundation's
/// `FileManager.SearchPathDirectory`.
///
/// There is deliberately no case for `Library/Preferences` (use the
/// preferences API) or `tmp` (use ``AppContext/temporaryDirectory``).
public enum SearchPathDirectory: UInt, Sendable, CaseIterable {
    /// `<home>/Applications`: a path the app cannot write; never created.
    case applicationDirectory = 1
    /// `<home>/Library`.
    case libraryDirectory = 5
    /// `<home>/Documents`.
    case documentDirectory = 9
    /// `<home>/Library/Autosave Information`.
    case autosavedInformationDirectory = 11
    /// `<home>/Library/Caches`.
    case cachesDirectory = 13
    /// `<home>/Library/Application Support`, created on demand.
    case applicationSupportDirectory = 14
    /// A fresh directory under `<home>/tmp/` (see ``AppContext/itemReplacementDirectory()``).
    case itemReplacementDirectory = 99
}

/// Which domains to search, with Foundation's raw values.
public struct SearchPathDomainMask: OptionSet, Sendable {
    public let rawValue: UInt
    public init(rawValue: UInt) { self.rawValue = rawValue }

    /// The app's own home: the only domain AppHome answers for.
    public static let userDomainMask = SearchPathDomainMask(rawValue: 1)
    public static let localDomainMask = SearchPathDomainMask(rawValue: 2)
    public static let networkDomainMask = SearchPathDomainMask(rawValue: 4)
    public static let systemDomainMask = SearchPathDomainMask(rawValue: 8)
    public static let allDomainsMask = SearchPathDomainMask(rawValue: 0x0FFFF)
}

/// The app an API call is made for: its home directory.
///
/// Resolved explicitly, or from the variables `apphome run` sets, which the
/// caller passes in (libraries never read the environment themselves).
public struct AppContext: Sendable, Equatable {
    /// The app's home (data container), without a trailing slash.
    public let homeDirectory: String

    /// An explicit context.
    public init(homeDirectory: String) {
        self.homeDirectory = Paths.trimmingTrailingSlashes(homeDirectory)
    }

    /// The context `apphome run` set up, as ``Configuration`` reads it:
    /// inside an app's sandbox its home (`/.apphome-info`), else
    /// `APPHOME_HOME`, else `CFFIXED_USER_HOME` when `APPHOME_BUNDLE_ID`
    /// is also set.
    ///
    /// - Parameter environment: the process environment, read by `main`.
    /// - Throws: ``ContainersError/noAppContext`` when neither is set to an
    ///   absolute path.
    public init(environment: [String: String]) throws(ContainersError) {
        let configuration = Configuration(variable: { environment[$0] })
        if let h = configuration.appHome, h.hasPrefix("/") {
            self.init(homeDirectory: h)
        } else if configuration.bundleIdentifier != nil, let h = environment["CFFIXED_USER_HOME"], h.hasPrefix("/") {
            self.init(homeDirectory: h)
        } else {
            throw .noAppContext
        }
    }

    /// The context of an installed app's current home.
    public init(home: ApplicationHome) {
        self.init(homeDirectory: home.path)
    }

    /// `<home>/tmp/`, with the trailing slash `NSTemporaryDirectory()` has.
    public var temporaryDirectory: String { homeDirectory + "/tmp/" }

    /// The equivalent of `NSSearchPathForDirectoriesInDomains`.
    ///
    /// For a mask containing ``SearchPathDomainMask/userDomainMask`` the
    /// array holds the single path in the home, as on iOS; with
    /// `expandTilde: false` it starts with `~` instead of the home. Other
    /// domains contribute nothing: an app has no local, network or system
    /// domain of its own. ``SearchPathDirectory/itemReplacementDirectory``
    /// has no fixed path and gives an empty array here. Nothing is created.
    public func searchPathForDirectories(_ directory: SearchPathDirectory, in mask: SearchPathDomainMask,
                                         expandTilde: Bool) -> [String] {
        guard mask.contains(.userDomainMask), let relative = Self.relativePath(directory) else { return [] }
        return [(expandTilde ? homeDirectory : "~") + "/" + relative]
    }

    /// The equivalent of `FileManager.urls(for:in:)`, as paths (always
    /// tilde-expanded). ``SearchPathDirectory/applicationSupportDirectory``
    /// is created (0700) when missing, since an iOS app must create it
    /// itself and every app does.
    ///
    /// - Throws: ``ContainersError/system(_:)`` when that creation fails.
    public func paths(for directory: SearchPathDirectory, in mask: SearchPathDomainMask) throws(ContainersError) -> [String] {
        let result = searchPathForDirectories(directory, in: mask, expandTilde: true)
        if directory == .applicationSupportDirectory, let path = result.first {
            do { try FileSystem.makeDirectories(path) } catch { throw .system(error) }
        }
        return result
    }

    /// The equivalent of `url(for: .itemReplacementDirectory, in: .userDomainMask, …, create: true)`:
    /// a new, empty directory (0700) under `<home>/tmp/`.
    public func itemReplacementDirectory() throws(ContainersError) -> String {
        do {
            try FileSystem.makeDirectories(homeDirectory + "/tmp")
            for _ in 0..<16 {
                let path = temporaryDirectory + "(A Document Being Saved By AppHome " + Random.uuid() + ")"
                if !FileSystem.exists(path) {
                    try FileSystem.makeDirectories(path)
                    return path
                }
            }
        } catch { throw .system(error) }
        throw .system(SystemError("mkdir", path: temporaryDirectory, errno: 17))
    }

    private static func relativePath(_ directory: SearchPathDirectory) -> String? {
        switch directory {
        case .applicationDirectory: return "Applications"
        case .libraryDirectory: return "Library"
        case .documentDirectory: return "Documents"
        case .autosavedInformationDirectory: return "Library/Autosave Information"
        case .cachesDirectory: return "Library/Caches"
        case .applicationSupportDirectory: return "Library/Application Support"
        case .itemReplacementDirectory: return nil
        }
    }
}
