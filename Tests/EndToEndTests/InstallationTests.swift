import Foundation
import Testing

/// `make install`, `make uninstall`, the man pages, the bash completion and `make deb`,
/// checked on what they really put on disk.
@Suite("Installation")
struct InstallationTests {
    static var top: URL { InstalledAppTests.examples.deletingLastPathComponent() }
    static let tools: [String: URL] = {
        var found: [String: URL] = [:]
        for name in ["make", "bash", "man", "dpkg-deb", "dpkg-shlibdeps", "lintian"] {
            for dir in ["/usr/bin", "/bin", "/usr/sbin"] {
                let url = URL(fileURLWithPath: dir).appendingPathComponent(name)
                if FileManager.default.isExecutableFile(atPath: url.path) { found[name] = url; break }
            }
        }
        return found
    }()

    /// The executables the package ships: the `.executable` products of Package.swift.
    static func shippedExecutables() throws -> [String] {
        let manifest = try String(contentsOf: top.appendingPathComponent("Package.swift"), encoding: .utf8)
        return manifest.split(separator: "\n").compactMap { line -> String? in
            guard let start = line.range(of: ".executable(name: \"") else { return nil }
            return String(line[start.upperBound...].prefix { $0 != "\"" })
        }
    }

    /// Every file under `directory`, as paths relative to it, sorted.
    static func files(under directory: URL) -> [String] {
        let base = directory.resolvingSymlinksInPath().path
        guard let walker = FileManager.default.enumerator(atPath: base) else { return [] }
        var result: [String] = []
        while let path = walker.nextObject() as? String {
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: base + "/" + path, isDirectory: &isDirectory), !isDirectory.boolValue {
                result.append(path)
            }
        }
        return result.sorted()
    }

    /// What `make install PREFIX=/usr` must put under DESTDIR, for these executables.
    static func expectedFiles(_ executables: [String]) -> [String] {
        var files: [String] = []
        for name in executables {
            files.append("usr/bin/" + name)
            let section = FileManager.default.fileExists(atPath: top.appendingPathComponent("man/\(name).8").path) ? "8" : "1"
            files.append("usr/share/man/man\(section)/\(name).\(section)")
        }
        files += ["defaults", "apphome", "security", "apphome-secretd", "plutil"].map { "usr/share/bash-completion/completions/" + $0 }
        files += ["defaults", "apphome", "security"].map { "usr/share/zsh/vendor-completions/_" + $0 }
        files += ["defaults", "apphome", "security"].map { "usr/share/fish/vendor_completions.d/\($0).fish" }
        // Run by the static security and apphome for the commands that may need libsecret (docs/installing.md).
        files += ["usr/lib/apphome/security-secret-service", "usr/lib/apphome/apphome-secret-service", "usr/lib/apphome/apphome-settings"]
        files += ["usr/lib/systemd/user/prefsd.service", "usr/lib/systemd/user/prefsd.socket", "usr/lib/systemd/user/apphome-secretd.service",
                  "usr/share/dbus-1/services/org.freedesktop.secrets.apphome.service"]
        return files.sorted()
    }

    func run(_ tool: String, _ arguments: [String], in root: TempRoot, environment: [String: String] = [:],
             timeout: TimeInterval = 120) throws -> CommandResult {
        let executable = try #require(Self.tools[tool], "\(tool) is not installed (make deps installs it)")
        return try Subprocess.run(executable, arguments, environment: root.environment(environment),
                                  ioDirectory: root.io, timeout: timeout)
    }

    func install(_ root: TempRoot, _ destdir: URL, binaries: URL, verb: String = "install") throws -> CommandResult {
        try run("make", ["-s", "-C", Self.top.path, verb, "DESTDIR=\(destdir.path)", "PREFIX=/usr",
                         "RELEASE_BIN=\(binaries.path)"], in: root)
    }

    @Test func theMakefileShipsEveryExecutableProductWithItsManPage() throws {
        let root = try TempRoot()
        let listed = try run("make", ["-s", "-C", Self.top.path, "--no-print-directory", "print-executables"], in: root)
        #expect(listed.status == 0, "\(listed)")
        let executables = try Self.shippedExecutables()
        #expect(executables.count >= 4 && executables.contains("defaults"), "\(executables)")
        #expect(listed.stdout.split(separator: " ").map { $0.trimmingCharacters(in: .whitespacesAndNewlines) } == executables,
                "EXECUTABLES in the Makefile must be the executable products of Package.swift")
        for name in executables {
            let pages = ["1", "8"].filter { FileManager.default.fileExists(atPath: Self.top.appendingPathComponent("man/\(name).\($0)").path) }
            #expect(pages.count == 1, "man/\(name).1 or man/\(name).8 must exist (one of them)")
        }
    }

    @Test func makeInstallPutsEveryFileInDestdirAndUninstallRemovesThemAll() throws {
        let root = try TempRoot()
        let binaries = try DefaultsBinary.url().deletingLastPathComponent()
        let destdir = root.workFile("destdir")
        let installed = try install(root, destdir, binaries: binaries)
        try #require(installed.status == 0, "\(installed)")
        let executables = try Self.shippedExecutables()
        #expect(Self.files(under: destdir) == Self.expectedFiles(executables))
        let fm = FileManager.default
        for name in executables {
            let path = destdir.appendingPathComponent("usr/bin/\(name)").path
            #expect(fm.contentsEqual(atPath: path, andPath: binaries.appendingPathComponent(name).path), "\(name) is the built one")
            #expect((try fm.attributesOfItem(atPath: path)[.posixPermissions] as? Int) == 0o755)
        }
        for page in Self.files(under: destdir.appendingPathComponent("usr/share")) {
            #expect((try fm.attributesOfItem(atPath: destdir.appendingPathComponent("usr/share/" + page).path)[.posixPermissions] as? Int) == 0o644, "\(page)")
        }
        // The installed service starts the installed prefsd, with the options of examples/systemd.
        let service = try String(contentsOf: destdir.appendingPathComponent("usr/lib/systemd/user/prefsd.service"), encoding: .utf8)
        #expect(service.contains("\nExecStart=/usr/bin/prefsd --foreground --socket %t/apphome/prefsd.sock\n"), "\(service)")
        // The installed defaults works on its own.
        let defaults = destdir.appendingPathComponent("usr/bin/defaults")
        let write = try Subprocess.run(defaults, ["--root", root.root.path, "write", "com.example.Installed", "k", "-int", "7"],
                                       environment: root.environment(["APPHOME_PREFSD": "off"]), ioDirectory: root.io)
        #expect(write.status == 0, "\(write)")
        let read = try Subprocess.run(defaults, ["--root", root.root.path, "read", "com.example.Installed", "k"],
                                      environment: root.environment(["APPHOME_PREFSD": "off"]), ioDirectory: root.io)
        #expect(read.status == 0 && read.stdout == "7\n", "\(read)")

        // The installed security finds its sibling in ../lib/apphome: a command that may need the
        // Secret Service (no keychain yet, a session bus set) runs there, and says what the sibling says.
        let security = destdir.appendingPathComponent("usr/bin/security")
        let info = try Subprocess.run(security, ["--root", root.root.path, "show-keychain-info"],
                                      environment: root.environment(["APPHOME_PREFSD": "off", "DBUS_SESSION_BUS_ADDRESS": "unix:path=/nonexistent"]),
                                      ioDirectory: root.io)
        #expect(info.status == 1 && info.stderr.contains("there is no keychain under") && !info.stderr.contains("security-secret-service"), "\(info)")

        let removed = try install(root, destdir, binaries: binaries, verb: "uninstall")
        #expect(removed.status == 0, "\(removed)")
        #expect(Self.files(under: destdir).isEmpty, "left behind: \(Self.files(under: destdir))")
    }

    @Test func everyManPageRendersWithoutWarnings() throws {
        let root = try TempRoot()
        let pages = Self.files(under: Self.top.appendingPathComponent("man"))
        #expect(pages.count >= 4)
        for page in pages {
            let rendered = try run("man", ["--warnings", "-l", Self.top.appendingPathComponent("man/" + page).path], in: root,
                                   environment: ["MANWIDTH": "80", "MAN_KEEP_FORMATTING": "", "MANPAGER": "cat", "PAGER": "cat"])
            #expect(rendered.status == 0 && rendered.stderr.isEmpty, "\(page): \(rendered)")
            #expect(rendered.stdout.contains("NAME") && rendered.stdout.contains("SYNOPSIS"), "\(page): \(rendered.stdout.prefix(300))")
        }
    }

    /// COMPREPLY of `words` (the last one is being completed) with the completion file loaded in bash.
    func complete(_ command: String, _ words: [String], path: URL, in root: TempRoot) throws -> [String] {
        let file = Self.top.appendingPathComponent("completions/\(command)").path
        let function = "_apphome_" + command
        let quoted = words.map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }.joined(separator: " ")
        let script = """
        source '\(file)' || exit 3
        complete -p \(command) | grep -q -- '-F \(function) ' || exit 4
        COMP_WORDS=(\(quoted)); COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
        COMP_LINE="${COMP_WORDS[*]}"; COMP_POINT=${#COMP_LINE}
        \(function)
        printf '%s\\n' "${COMPREPLY[@]}"
        """
        let result = try run("bash", ["--norc", "--noprofile", "-c", script], in: root,
                             environment: ["PATH": path.path + ":/usr/bin:/bin", "APPHOME_PREFSD": "off"])
        #expect(result.status == 0 && result.stderr.isEmpty, "\(result)")
        return result.stdout.split(separator: "\n").map(String.init).filter { !$0.isEmpty }.sorted()
    }

    @Test func theBashCompletionCompletesVerbsDomainsKeysAndBundleIdentifiers() throws {
        let root = try TempRoot()
        let binaries = try DefaultsBinary.url().deletingLastPathComponent()
        let defaults = binaries.appendingPathComponent("defaults")
        for (domain, key) in [("com.example.Bugs", "maxBugs"), ("com.example.Bugs", "soundEnabled"),
                              ("com.example.Bugs", "two words"), ("com.example.Beetles", "legs")] {
            let w = try Subprocess.run(defaults, ["--root", root.root.path, "write", domain, key, "-int", "1"],
                                       environment: root.environment(["APPHOME_PREFSD": "off"]), ioDirectory: root.io)
            try #require(w.status == 0, "\(w)")
        }
        let r = root.root.path
        #expect(try complete("defaults", ["defaults", "rea"], path: binaries, in: root) == ["read", "read-type"])
        #expect(try complete("defaults", ["defaults", "--root", r, "read", "com.example.B"], path: binaries, in: root)
                == ["com.example.Beetles", "com.example.Bugs"])
        #expect(try complete("defaults", ["defaults", "--root", r, "read", "com.example.Bugs", ""], path: binaries, in: root)
                == ["maxBugs", "soundEnabled", "two words"])
        #expect(try complete("defaults", ["defaults", "--root", r, "delete", "com.example.Bugs", "s"], path: binaries, in: root)
                == ["soundEnabled"])

        let apphome = binaries.appendingPathComponent("apphome")
        let installed = try Subprocess.run(apphome, ["--root", r, "install", CrashAndDoctorTests.v1],
                                           environment: root.environment(["APPHOME_PREFSD": "off"]), ioDirectory: root.io)
        try #require(installed.status == 0, "\(installed)")
        #expect(try complete("apphome", ["apphome", "--root", r, "unin"], path: binaries, in: root) == ["uninstall"])
        #expect(try complete("apphome", ["apphome", "--root", r, "info", "com.ex"], path: binaries, in: root) == ["com.example.ScaryBugs"])
        #expect(try complete("security", ["security", "--root", r, "--app", "com."], path: binaries, in: root) == ["com.example.ScaryBugs"])
        #expect(try complete("security", ["security", "dump"], path: binaries, in: root) == ["dump-keychain"])

        // The verbs added since, and keys (not domains) where keys belong, also after -g and -app.
        #expect(try complete("defaults", ["defaults", "app"], path: binaries, in: root) == ["apply"])
        #expect(try complete("apphome", ["apphome", "lau"], path: binaries, in: root) == ["launch"])
        #expect(try complete("apphome", ["apphome", "--root", r, "launch", "com.ex"], path: binaries, in: root) == ["com.example.ScaryBugs"])
        let global = try Subprocess.run(defaults, ["--root", r, "write", "-g", "AppleLocale", "en_GB"],
                                        environment: root.environment(["APPHOME_PREFSD": "off"]), ioDirectory: root.io)
        try #require(global.status == 0, "\(global)")
        #expect(try complete("defaults", ["defaults", "--root", r, "read", "-g", ""], path: binaries, in: root) == ["AppleLocale"])
        #expect(try complete("defaults", ["defaults", "--root", r, "read", "-globalDomain", "Apple"], path: binaries, in: root) == ["AppleLocale"])
        let app = try Subprocess.run(defaults, ["--root", r, "write", "com.example.ScaryBugs", "thumbnailSize", "-int", "64"],
                                     environment: root.environment(["APPHOME_PREFSD": "off"]), ioDirectory: root.io)
        try #require(app.status == 0, "\(app)")
        #expect(try complete("defaults", ["defaults", "--root", r, "read", "-app", "Scary"], path: binaries, in: root) == ["ScaryBugs"])
        #expect(try complete("defaults", ["defaults", "--root", r, "read", "-app", "ScaryBugs", "thumb"], path: binaries, in: root) == ["thumbnailSize"])
        #expect(try complete("defaults", ["defaults", "--root", r, "write", "com.example.Bugs", "maxBugs", "-in"], path: binaries, in: root)
                == ["-int", "-integer"])
        #expect(try complete("security", ["security", "find-generic-password", "-s", "api", "-w", "login"], path: binaries, in: root)
                == ["login.keychain"])

        // fish, with the same binaries: verbs, domains, keys.
        #expect(try completeFish("defaults", "defaults --root \(r) read com.example.Bugs ", path: binaries, in: root)
                == ["maxBugs", "soundEnabled", "two words"])
        #expect(try completeFish("defaults", "defaults --root \(r) read -g ", path: binaries, in: root) == ["AppleLocale"])
        #expect(try completeFish("apphome", "apphome --root \(r) info com.ex", path: binaries, in: root) == ["com.example.ScaryBugs"])
        #expect(try completeFish("security", "security list-", path: binaries, in: root) == ["list-credentials", "list-keychains"])

        // zsh: the completion function run with compadd standing in for zsh's own.
        #expect(try completeZsh("defaults", ["defaults", "--root", r, "read", "-g", ""], path: binaries, in: root) == ["AppleLocale"])
        #expect(try completeZsh("defaults", ["defaults", "--root", r, "read", "com.example.Bugs", "s"], path: binaries, in: root) == ["soundEnabled"])
        #expect(try completeZsh("apphome", ["apphome", "--root", r, "launch", "com.ex"], path: binaries, in: root) == ["com.example.ScaryBugs"])
        #expect(try completeZsh("security", ["security", "login-"], path: binaries, in: root) == ["login-keychain"])
    }

    /// What the zsh completion function offers for `words` (the last is being typed): the
    /// file is run with `compadd` and `_files` replaced by functions that print what they get,
    /// and the candidates starting with the last word are kept (zsh's own filtering).
    func completeZsh(_ command: String, _ words: [String], path: URL, in root: TempRoot) throws -> [String] {
        let zsh = try #require(["/usr/bin/zsh", "/bin/zsh"].first { FileManager.default.isExecutableFile(atPath: $0) },
                               "zsh is not installed (make deps installs it)")
        let script = """
        compadd() { local seen=0 a; for a in "$@"; do if [[ $seen == 1 ]]; then print -r -- "$a"; elif [[ $a == -- ]]; then seen=1; fi; done
                    [[ $seen == 1 ]] || print -rl -- "${@:#-*}"; }
        _files() { }
        _command_names() { }
        words=("${@:2}"); CURRENT=$#words; PREFIX=${words[CURRENT]}
        source "$1"
        """
        let file = Self.top.appendingPathComponent("completions/_\(command)").path
        let result = try Subprocess.run(URL(fileURLWithPath: zsh), ["-f", "-c", script, "zsh", file] + words,
                                        environment: root.environment(["PATH": path.path + ":/usr/bin:/bin", "APPHOME_PREFSD": "off"]),
                                        ioDirectory: root.io)
        #expect(result.status == 0 && result.stderr.isEmpty, "\(result)")
        let typed = words.last ?? ""
        return Set(result.stdout.split(separator: "\n").map(String.init).filter { !$0.isEmpty && $0.hasPrefix(typed) }).sorted()
    }

    /// What fish offers for `line` (descriptions dropped) with the completion file loaded.
    func completeFish(_ command: String, _ line: String, path: URL, in root: TempRoot) throws -> [String] {
        let fish = try #require(["/usr/bin/fish", "/bin/fish"].first { FileManager.default.isExecutableFile(atPath: $0) },
                                "fish is not installed (make deps installs it)")
        let file = Self.top.appendingPathComponent("completions/\(command).fish").path
        let result = try Subprocess.run(URL(fileURLWithPath: fish), ["--no-config", "-c", "source $argv[1]; and complete -C $argv[2]", file, line],
                                        environment: root.environment(["PATH": path.path + ":/usr/bin:/bin", "APPHOME_PREFSD": "off"]),
                                        ioDirectory: root.io)
        #expect(result.status == 0 && result.stderr.isEmpty, "\(result)")
        return result.stdout.split(separator: "\n").map { String($0.prefix { $0 != "\t" }) }.filter { !$0.isEmpty }.sorted()
    }

    @Test(.enabled(if: ["dpkg-deb", "dpkg-shlibdeps", "lintian"].allSatisfy { tools[$0] != nil },
                   "make deb needs dpkg-deb, dpkg-shlibdeps (dpkg-dev) and lintian: run make deps"),
          .enabled(if: !TempRoot.daemonMode, "the package does not depend on prefsd mode: built once, in the files run"))
    func makeDebBuildsAPackageLintianPassesWithTheInstalledFiles() throws {
        let root = try TempRoot()
        // The build under test: its executables link the Swift runtime statically (Package.swift),
        // so they package as a release build does (a program that loaded the toolchain's
        // libswiftCore.so would fail dpkg-shlibdeps: no Debian package ships it).
        let binaries = try DefaultsBinary.url().deletingLastPathComponent()
        let out = root.workFile("deb")
        let built = try run("bash", [Self.top.appendingPathComponent("packaging/build-deb.sh").path], in: root,
                            // gzip, not make deb's xz: the same package, a third of the CPU.
                            environment: ["BIN_DIR": binaries.path, "OUT_DIR": out.path, "TMPDIR": root.work.path, "DEB_COMPRESSION": "gzip"],
                            timeout: 600)
        try #require(built.status == 0, "\(built)")
        let deb = try #require(built.stdout.split(separator: "\n").last.map(String.init))
        #expect(!built.stderr.contains("E: "), "lintian errors: \(built.stderr)")

        let listing = try run("bash", ["-c", "dpkg-deb -c \"$0\" | awk '$1 !~ /^d/ { sub(/^\\.\\//, \"\", $6); print $6 }'", deb], in: root)
        let packaged = Set(listing.stdout.split(separator: "\n").map(String.init))
        let executables = try Self.shippedExecutables()
        let expected = Set(Self.expectedFiles(executables).map { $0.hasPrefix("usr/share/man/") ? $0 + ".gz" : $0 })
        #expect(packaged.subtracting(["usr/share/doc/apphome/copyright", "usr/share/doc/apphome/changelog.gz",
                                      "usr/share/lintian/overrides/apphome"]) == expected)

        let fields = try run("dpkg-deb", ["-f", deb, "Package", "Depends", "Conflicts"], in: root)
        #expect(fields.stdout.contains("Package: apphome\n"), "\(fields)")
        #expect(fields.stdout.contains("Conflicts: gnustep-base-runtime\n"), "\(fields)")
        for library in ["libc6", "libsecret-1-0", "libglib2.0-0"] {
            #expect(fields.stdout.contains(library), "Depends names \(library): \(fields.stdout)")
        }
    }
}
