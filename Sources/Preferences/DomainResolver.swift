#if canImport(Glibc)
import Glibc
#endif
import AppHomeSystem
import PropertyList
/// Turns a domain into the file that holds it. The one place that knows the
/// on-disk layout of preferences.
///
/// Layout, under the root:
/// - `Library/Preferences/<domain>.plist`
/// - `Library/Preferences/.GlobalPreferences.plist` for the global domain
/// - `Library/Preferences/ByHost/<domain>.<host-id>.plist` for `-currentHost`
///
/// An installed app's domain lives in its home instead; the containers layer
/// supplies ``appPreferencesDirectory`` to route it there.
public struct DomainResolver: Sendable {
    /// The AppHome root when no `--root` is given: `APPHOME_ROOT`, else
    /// `$XDG_DATA_HOME/apphome` (an absolute `XDG_DATA_HOME` only), else
    /// `$HOME/.local/share/apphome`; `nil` when none is set.
    public static func defaultRoot(apphomeRoot: String?, xdgDataHome: String?, home: String?) -> String? {
        Paths.defaultRoot(apphomeRoot: apphomeRoot, xdgDataHome: xdgDataHome, home: home)
    }


    /// The AppHome root directory.
    public var root: String
    /// Given a domain name, the `Library/Preferences` directory of the app
    /// home that owns it, or `nil` for a domain of no installed app.
    public var appPreferencesDirectory: @Sendable (String) -> String?
    /// The domains of installed apps, listed by ``domainNames()`` beside
    /// those under the root.
    public var installedAppDomains: [String]

    public init(root: String, appPreferencesDirectory: @escaping @Sendable (String) -> String? = { _ in nil }, installedAppDomains: [String] = []) {
        self.root = Paths.trimmingTrailingSlashes(root)
        self.appPreferencesDirectory = appPreferencesDirectory
        self.installedAppDomains = installedAppDomains
    }

    /// A resolver that routes each installed app's domain to the
    /// `Library/Preferences` directory of its home.
    ///
    /// - Parameter appPreferencesDirectories: bundle id → directory.
    public init(root: String, appPreferencesDirectories: [String: String]) {
        self.init(root: root, appPreferencesDirectory: { appPreferencesDirectories[$0] }, installedAppDomains: Array(appPreferencesDirectories.keys))
    }

    /// `<root>/Library/Preferences`, where domains of no app live.
    public var preferencesDirectory: String { root + "/Library/Preferences" }

    /// `<root>/Library/Preferences/ByHost`.
    public var byHostDirectory: String { preferencesDirectory + "/ByHost" }

    /// The file that stores `domain` for `scope`.
    ///
    /// - Parameter hostIdentifier: this machine's host id; only consulted for
    ///   ``HostScope/currentHost``.
    /// - Throws: ``PreferencesError/invalidHostName(_:)`` for a bad `-host`.
    public func path(for domain: Domain, scope: HostScope = .anyHost, hostIdentifier: () throws(PreferencesError) -> String) throws(PreferencesError) -> String {
        let base: String
        switch domain {
        case .file(let path):
            return path
        case .global:
            base = ".GlobalPreferences"
        case .named(let name):
            base = name
        }
        switch scope {
        case .anyHost:
            if case .named(let name) = domain, let dir = appPreferencesDirectory(name) {
                return dir + "/" + name + ".plist"
            }
            return preferencesDirectory + "/" + base + ".plist"
        case .currentHost:
            return byHostDirectory + "/" + base + "." + (try hostIdentifier()) + ".plist"
        case .named(let host):
            // Bytes, not characters: "/" or NUL followed by a combining
            // mark is one `Character` that `contains("/")` does not find,
            // and the file system would still see the slash (or the C string end).
            let bytes = Array(host.utf8)
            guard !bytes.isEmpty, !bytes.contains(UInt8(ascii: "/")), !bytes.contains(0),
                  !zip(bytes, bytes.dropFirst()).contains(where: { $0 == UInt8(ascii: ".") && $1 == UInt8(ascii: ".") }) else {
                throw .invalidHostName(host)
            }
            return byHostDirectory + "/" + base + "." + host + ".plist"
        }
    }

    /// The named domain (or the global one) whose file `domain` names by
    /// path, so that a rule on the name (the managed keys, a settings
    /// schema) holds whatever the spelling: `<root>/Library/Preferences/com.a`
    /// is `com.a`. The directories are compared as files (device and inode),
    /// so a second slash or a link to the directory is the same; a path of
    /// any other file, and every other domain, is returned as it is.
    public func canonical(_ domain: Domain) -> Domain {
        guard case .file(let path) = domain else { return domain }
        let name = FileSystem.lastComponent(path)
        guard name.hasSuffix(".plist") else { return domain }
        let base = String(name.dropLast(6))
        let candidate: Domain
        if base == ".GlobalPreferences" { candidate = .global } else {
            do { try Domain.validateName(base) } catch { return domain }
            candidate = .named(base)
        }
        guard let file = try? self.path(for: candidate, scope: .anyHost, hostIdentifier: { "" }),
              FileSystem.lastComponent(file).utf8.elementsEqual(name.utf8) else { return domain }
        return Self.sameDirectory(FileSystem.parentDirectory(path), FileSystem.parentDirectory(file)) ? candidate : domain
    }

    /// Whether `a` and `b` name one directory: the same device and inode,
    /// or (when either is missing) the same path once repeated slashes go.
    static func sameDirectory(_ a: String, _ b: String) -> Bool {
        var sa = stat(), sb = stat()
        if stat(a, &sa) == 0 && stat(b, &sb) == 0 { return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino }
        func normal(_ p: String) -> [Substring] { p.split(separator: "/", omittingEmptySubsequences: true) }
        return normal(a).elementsEqual(normal(b)) { $0.utf8.elementsEqual($1.utf8) }
    }

    /// The domains stored for the current user (not ByHost, not files),
    /// sorted, with the global domain left out as `defaults domains` does.
    public func domainNames() throws(PreferencesError) -> [String] {
        let names: [String]
        do { names = try FileSystem.directoryEntries(preferencesDirectory) } catch { throw .system(error) }
        // By exact scalars: names that are canonically equivalent are two files.
        var result = Set(names.compactMap { name -> PlistKey? in
            guard name.hasSuffix(".plist"), !name.hasPrefix(".") else { return nil }
            return PlistKey(String(name.dropLast(6)))
        })
        for app in installedAppDomains {
            if let dir = appPreferencesDirectory(app), FileSystem.exists(dir + "/" + app + ".plist") { result.insert(PlistKey(app)) }
        }
        return result.sorted().map(\.string)
    }
}
