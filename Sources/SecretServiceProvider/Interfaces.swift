/// The five interfaces of the Secret Service API (spec 0.2), from which
/// GDBus's introspection data is made: GDBus checks every call's argument
/// types against it before the provider sees the call (a wrong type is
/// InvalidArgs), and property calls' names, access and value types.
enum Interfaces {
    static let service = "org.freedesktop.Secret.Service"
    static let collection = "org.freedesktop.Secret.Collection"
    static let item = "org.freedesktop.Secret.Item"
    static let session = "org.freedesktop.Secret.Session"
    static let prompt = "org.freedesktop.Secret.Prompt"
    static let properties = "org.freedesktop.DBus.Properties"

    /// A method: its name, then its arguments as `name:type`, those after
    /// `->` going out.
    struct Method { var name: String; var arguments: [String] }
    /// A property: `name:type`, and whether clients may set it.
    struct Property { var declaration: String; var writable: Bool }
    struct Interface { var name: String; var methods: [Method]; var properties: [Property]; var signals: [Method] }

    private static func m(_ name: String, _ arguments: String...) -> Method { Method(name: name, arguments: arguments) }
    private static func read(_ declarations: String...) -> [Property] { declarations.map { Property(declaration: $0, writable: false) } }
    private static func readWrite(_ declarations: String...) -> [Property] { declarations.map { Property(declaration: $0, writable: true) } }
    /// The `<prefix>Created`, `…Deleted` and `…Changed` signals, each with one object path.
    private static func lifeSignals(_ prefix: String, _ argument: String) -> [Method] {
        ["Created", "Deleted", "Changed"].map { m(prefix + $0, "\(argument):o") }
    }

    static let all: [Interface] = [
        Interface(name: service, methods: [
            m("OpenSession", "algorithm:s", "input:v", "->", "output:v", "result:o"),
            m("CreateCollection", "properties:a{sv}", "alias:s", "->", "collection:o", "prompt:o"),
            m("SearchItems", "attributes:a{ss}", "->", "unlocked:ao", "locked:ao"),
            m("Unlock", "objects:ao", "->", "unlocked:ao", "prompt:o"),
            m("Lock", "objects:ao", "->", "locked:ao", "Prompt:o"),
            m("GetSecrets", "items:ao", "session:o", "->", "secrets:a{o(oayays)}"),
            m("ReadAlias", "name:s", "->", "collection:o"),
            m("SetAlias", "name:s", "collection:o"),
        ], properties: read("Collections:ao"), signals: lifeSignals("Collection", "collection")),
        Interface(name: collection, methods: [
            m("Delete", "->", "prompt:o"),
            m("SearchItems", "attributes:a{ss}", "->", "results:ao"),
            m("CreateItem", "properties:a{sv}", "secret:(oayays)", "replace:b", "->", "item:o", "prompt:o"),
        ], properties: read("Items:ao") + readWrite("Label:s") + read("Locked:b", "Created:t", "Modified:t"),
           signals: lifeSignals("Item", "item")),
        Interface(name: item, methods: [
            m("Delete", "->", "Prompt:o"),
            m("GetSecret", "session:o", "->", "secret:(oayays)"),
            m("SetSecret", "secret:(oayays)"),
        ], properties: read("Locked:b") + readWrite("Attributes:a{ss}", "Label:s", "Type:s") + read("Created:t", "Modified:t"),
           signals: []),
        Interface(name: session, methods: [m("Close")], properties: [], signals: []),
        Interface(name: prompt, methods: [m("Prompt", "window-id:s"), m("Dismiss")], properties: [],
                  signals: [m("Completed", "dismissed:b", "result:v")]),
    ]

    /// The names of the properties of `interface` that clients may read (all are).
    static func propertyNames(of interface: String) -> [String] {
        (all.first { $0.name == interface }?.properties ?? []).map { String($0.declaration.split(separator: ":")[0]) }
    }

    /// The D-Bus introspection XML of ``all``.
    static var xml: String {
        func args(_ list: [String], directions: Bool) -> String {
            var out = "", direction = "in"
            for a in list {
                if a == "->" { direction = "out"; continue }
                let parts = a.split(separator: ":", maxSplits: 1)
                out += "<arg name=\"\(parts[0])\" type=\"\(parts[1])\"\(directions ? " direction=\"\(direction)\"" : "")/>"
            }
            return out
        }
        var xml = "<node>"
        for i in all {
            xml += "<interface name=\"\(i.name)\">"
            for m in i.methods { xml += "<method name=\"\(m.name)\">\(args(m.arguments, directions: true))</method>" }
            for p in i.properties {
                let parts = p.declaration.split(separator: ":", maxSplits: 1)
                xml += "<property name=\"\(parts[0])\" type=\"\(parts[1])\" access=\"\(p.writable ? "readwrite" : "read")\"/>"
            }
            for s in i.signals { xml += "<signal name=\"\(s.name)\">\(args(s.arguments, directions: false))</signal>" }
            xml += "</interface>"
        }
        return xml + "</node>"
    }
}
