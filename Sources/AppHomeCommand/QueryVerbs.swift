import CommandSupport
import Containers
import PropertyList

extension AppHomeCommand {
    /// `list [--json]`.
    func list(_ args: [String]) throws {
        var json = false, running = false
        for arg in args {
            if arg == "--json" { json = true } else if arg == "--running" { running = true } else if arg.hasPrefix("-") {
                throw CommandFailure.usage("unknown option '\(arg)'")
            } else {
                throw CommandFailure.usage("unexpected argument '\(arg)'")
            }
        }
        if running {
            listRunning(json: json)
            return
        }
        let entries = try manager.registry.read().sortedEntries
        if json {
            let objects = entries.map { e -> String in
                var fields: [(String, String)] = [
                    ("bundleIdentifier", JSON.string(e.bundleIdentifier.rawValue)),
                    ("name", JSON.string(e.bundleName)),
                    ("version", JSON.string(e.version)),
                ]
                if let s = e.shortVersion { fields.append(("shortVersion", JSON.string(s))) }
                if let s = e.displayName { fields.append(("displayName", JSON.string(s))) }
                fields.append(("home", JSON.string(manager.layout.home(uuid: e.homeUUID, bundleName: e.bundleName).path)))
                fields.append(("installTime", JSON.string(Self.iso8601(e.installTime))))
                fields.append(("team", JSON.string(e.team?.rawValue ?? "unsigned")))
                return "  {" + fields.map { "\"\($0.0)\": \($0.1)" }.joined(separator: ", ") + "}"
            }
            console.out(objects.isEmpty ? "[]\n" : "[\n" + objects.joined(separator: ",\n") + "\n]\n")
            return
        }
        let rows = [["BUNDLE ID", "VERSION", "NAME", "HOME"]] + entries.map { e in
            [e.bundleIdentifier.rawValue, e.displayVersion, e.bundleName,
             manager.layout.home(uuid: e.homeUUID, bundleName: e.bundleName).path]
        }
        var widths = [0, 0, 0]
        for row in rows { for i in 0..<3 { widths[i] = max(widths[i], row[i].count) } }
        for row in rows {
            var line = ""
            for i in 0..<3 { line += row[i] + String(repeating: " ", count: widths[i] - row[i].count + 2) }
            console.out(line + row[3] + "\n")
        }
    }

    /// `list --running`: the apps `apphome run` and `launch` run now, and
    /// whether each is confined (an unsandboxed one says so in capitals).
    func listRunning(json: Bool) {
        let records = RunRecord.running(in: manager.layout)
        if json {
            let objects = records.map { r in
                "  {\"bundleIdentifier\": \(JSON.string(r.bundleIdentifier)), \"pid\": \(r.pid), \"sandboxed\": \(r.sandboxed), "
                    + "\"network\": \(r.network), \"instance\": \(JSON.string(r.instance))}"
            }
            console.out(objects.isEmpty ? "[]\n" : "[\n" + objects.joined(separator: ",\n") + "\n]\n")
            return
        }
        let rows = [["BUNDLE ID", "PID", "SANDBOX"]] + records.map { r in
            [r.bundleIdentifier, String(r.pid), r.sandboxed ? (r.network ? "yes" : "yes, no network") : "NO (--no-sandbox)"]
        }
        let w0 = rows.map(\.[0].count).max() ?? 0, w1 = rows.map(\.[1].count).max() ?? 0
        for row in rows {
            console.out(row[0] + String(repeating: " ", count: w0 - row[0].count + 2) + row[1]
                        + String(repeating: " ", count: w1 - row[1].count + 2) + row[2] + "\n")
        }
    }

    /// `info <bundle-id>`.
    func info(_ args: [String]) throws {
        let id = try bundleIdentifier(try operands(args, ["bundle identifier"])[0])
        let e = try manager.entry(for: id)
        let home = manager.layout.home(uuid: e.homeUUID, bundleName: e.bundleName)
        var lines = [("Bundle ID", id.rawValue), ("Name", e.bundleName)]
        if let d = e.displayName { lines.append(("Display name", d)) }
        lines.append(("Version", e.shortVersion ?? "-"))
        lines.append(("Build", e.version))
        lines.append(("Installed", Self.iso8601(e.installTime)))
        lines.append(("Team", e.team?.rawValue ?? "unsigned"))
        if !e.keychainGroups.isEmpty { lines.append(("Keychain access groups", e.keychainGroups.joined(separator: ", "))) }
        if let store = e.ubiquityKeyValueStore { lines.append(("Key-value store", store)) }
        lines.append(("Home", home.path))
        lines.append(("App", home.app))
        lines.append(("Documents", home.documents))
        lines.append(("Library", home.library))
        lines.append(("Caches", home.caches))
        lines.append(("tmp", home.tmp))
        for (group, container) in try manager.registry.groupContainers(of: id) { lines.append(("Group \(group)", container.path)) }
        for (k, v) in lines { console.out(k + ": " + v + "\n") }
    }

    /// The kinds `container` prints, as `simctl get_app_container` names them.
    static let containerKinds = ["app", "data", "documents", "library", "caches", "tmp", "groups"]

    /// `container <bundle-id> [app|data|documents|library|caches|tmp|groups]`;
    /// `groups` prints `group-id<TAB>path` per app group, as simctl does.
    func container(_ args: [String]) throws {
        let ops = try operands(args, ["bundle identifier", "container kind"], optional: 1)
        let id = try bundleIdentifier(ops[0])
        let kind = ops.count > 1 ? ops[1] : "app"
        guard Self.containerKinds.contains(kind) else {
            throw CommandFailure.usage("unknown container kind '\(kind)' (use \(Self.containerKinds.joined(separator: ", ")))")
        }
        if kind == "groups" {
            for (group, container) in try manager.registry.groupContainers(of: id) { console.out("\(group)\t\(container.path)\n") }
            return
        }
        let home = try manager.home(for: id)
        let path: String
        switch kind {
        case "app": path = home.app
        case "documents": path = home.documents
        case "library": path = home.library
        case "caches": path = home.caches
        case "tmp": path = home.tmp
        default: path = home.path
        }
        console.out(path + "\n")
    }

    /// `2026-01-31T12:00:00Z`.
    static func iso8601(_ date: PlistDate) -> String {
        CivilTime(date)?.iso8601 ?? "\(date.secondsSince1970)"
    }
}

/// The bits of JSON `list --json` writes.
enum JSON {
    static func string(_ s: String) -> String { PlistCodec.jsonStringLiteral(s) }
}
