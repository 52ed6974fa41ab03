import PropertyList

/// Finds keys defined twice, which the property-list readers resolve
/// silently (the last one wins): in `.strings` text (SB505) and in XML
/// `<dict>`s (SB207). Both scanners run only on files that already parsed,
/// so they can be lenient about anything else.
enum DuplicateKeys {
    /// Keys of a `.strings` table (UTF-8 text) that appear more than once, in order of their second appearance.
    static func inStrings(_ b: [UInt8]) -> [String] {
        var i = 0, seen: Set<String> = [], dups: [String] = []
        var expectKey = true
        func skip() {
            while i < b.count {
                if [0x20, 0x09, 0x0A, 0x0D].contains(b[i]) { i += 1; continue }
                if b[i] == UInt8(ascii: "/"), i + 1 < b.count, b[i + 1] == UInt8(ascii: "/") {
                    while i < b.count && b[i] != 0x0A { i += 1 }
                    continue
                }
                if b[i] == UInt8(ascii: "/"), i + 1 < b.count, b[i + 1] == UInt8(ascii: "*") {
                    i += 2
                    while i + 1 < b.count && !(b[i] == UInt8(ascii: "*") && b[i + 1] == UInt8(ascii: "/")) { i += 1 }
                    i += 2
                    continue
                }
                return
            }
        }
        func token() -> String {
            var out: [UInt8] = []
            if i < b.count && b[i] == UInt8(ascii: "\"") {
                i += 1
                while i < b.count && b[i] != UInt8(ascii: "\"") {
                    if b[i] == UInt8(ascii: "\\") && i + 1 < b.count { out.append(b[i]); i += 1 }
                    out.append(b[i]); i += 1
                }
                i += 1
            } else {
                while i < b.count && OldStyleText.isUnquotedCharacter(b[i]) { out.append(b[i]); i += 1 }
            }
            return (try? OldStyleText.unescape(String(decoding: out, as: UTF8.self))) ?? String(decoding: out, as: UTF8.self)
        }
        while true {
            skip()
            guard i < b.count else { break }
            if b[i] == UInt8(ascii: "=") || b[i] == UInt8(ascii: ";") {
                expectKey = b[i] == UInt8(ascii: ";")
                i += 1
                continue
            }
            let start = i
            let t = token()
            if i == start { i += 1; continue }
            if expectKey {
                if !seen.insert(t).inserted && !dups.contains(t) { dups.append(t) }
                expectKey = false
            }
        }
        return dups
    }

    /// A duplicate key in an XML property list: the path of the dictionary
    /// (`PreferenceSpecifiers[2]`, or empty for the top) and the key.
    struct XMLDuplicate: Equatable {
        var path: [PathStep]
        var key: String
    }

    enum PathStep: Equatable {
        case key(String)
        case index(Int)
    }

    /// Duplicate `<key>`s within one `<dict>` of an XML property list.
    static func inXML(_ b: [UInt8]) -> [XMLDuplicate] {
        // One frame per open container: a dictionary's keys and pending key, or an array's next index.
        struct Frame { var isDict: Bool; var keys: Set<String> = []; var pendingKey: String?; var index = 0; var step: PathStep? }
        var stack: [Frame] = []
        var out: [XMLDuplicate] = []
        var i = 0
        func path() -> [PathStep] { stack.compactMap(\.step) }
        /// The step that names a value starting now in the current container.
        func stepForNewValue() -> PathStep? {
            guard let top = stack.last else { return nil }
            return top.isDict ? top.pendingKey.map(PathStep.key) : .index(top.index)
        }
        func valueDone() {
            guard !stack.isEmpty else { return }
            if stack[stack.count - 1].isDict { stack[stack.count - 1].pendingKey = nil } else { stack[stack.count - 1].index += 1 }
        }
        while i < b.count {
            guard b[i] == UInt8(ascii: "<") else { i += 1; continue }
            if b[i...].starts(with: Array("<!--".utf8)) {
                while i + 2 < b.count && !(b[i] == UInt8(ascii: "-") && b[i + 1] == UInt8(ascii: "-") && b[i + 2] == UInt8(ascii: ">")) { i += 1 }
                i += 3
                continue
            }
            var j = i + 1
            while j < b.count && b[j] != UInt8(ascii: ">") { j += 1 }
            let tag = String(decoding: b[(i + 1)..<min(j, b.count)], as: UTF8.self)
            i = j + 1
            switch tag {
            case "dict", "array":
                stack.append(Frame(isDict: tag == "dict", step: stepForNewValue()))
            case "/dict", "/array":
                if !stack.isEmpty { stack.removeLast() }
                valueDone()
            case "key":
                var k = i
                while k < b.count && b[k] != UInt8(ascii: "<") { k += 1 }
                let key = XMLText.decodeEntities(String(decoding: b[i..<k], as: UTF8.self))
                i = k
                if !stack.isEmpty && stack[stack.count - 1].isDict {
                    if !stack[stack.count - 1].keys.insert(key).inserted { out.append(XMLDuplicate(path: path(), key: key)) }
                    stack[stack.count - 1].pendingKey = key
                }
            case "/key": break
            case "string", "integer", "real", "date", "data":
                var k = i
                while k < b.count && b[k] != UInt8(ascii: "<") { k += 1 }
                i = k
            case "/string", "/integer", "/real", "/date", "/data", "true/", "false/", "dict/", "array/", "string/", "data/":
                valueDone()
            default: break
            }
        }
        return out
    }
}

enum XMLText {
    /// The five predefined XML entities; plist writers escape nothing else in keys.
    static func decodeEntities(_ s: String) -> String {
        guard s.contains("&") else { return s }
        return s.replacing("&lt;", with: "<").replacing("&gt;", with: ">").replacing("&quot;", with: "\"")
            .replacing("&apos;", with: "'").replacing("&amp;", with: "&")
    }
}
