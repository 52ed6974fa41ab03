/// AppHome's one version number.
///
/// Every executable prints it for `--version`, and the Debian package takes
/// it from here (`make print-version`, which `packaging/build-deb.sh`
/// reads): change it here and nowhere else.
public enum AppHomeVersion {
    /// The release, as the `.deb`'s `Version:` field shows it.
    public static let number = "0.1.0"

    /// What `<command> --version` prints: `defaults (AppHome) 0.1.0`.
    public static func line(command: String) -> String { "\(command) (AppHome) \(number)\n" }
}
