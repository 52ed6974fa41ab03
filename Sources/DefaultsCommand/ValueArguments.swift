import AppHomeSystem
import CommandSupport
import PropertyList

/// What `write D K …` asks for, after the value arguments are parsed.
enum WriteRequest: Equatable {
    /// Store this value under the key.
    case set(PlistValue)
    /// Append these items to the stored array (created when missing).
    case arrayAdd([PlistValue])
    /// Add or replace these entries of the stored dictionary (created when missing).
    case dictAdd([PlistKey: PlistValue])
}

/// Parses the value part of `defaults write` with macOS rules, but
/// strictly: every malformed scalar is an error naming the argument.
enum ValueArguments {
    /// Parses `args` (everything after the key).
    ///
    /// - Throws: ``CommandFailure`` with macOS wording where macOS has one.
    static func parse(_ args: [String]) throws(CommandFailure) -> WriteRequest {
        guard let first = args.first else { throw .usage("write needs a value after the key") }
        switch first {
        case "-array", "-array-add":
            var items: [PlistValue] = []
            var rest = args.dropFirst()
            while !rest.isEmpty { items.append(try element(&rest)) }
            return first == "-array" ? .set(.array(items)) : .arrayAdd(items)
        case "-dict", "-dict-add":
            var entries: [PlistKey: PlistValue] = [:]
            var rest = args.dropFirst()
            while let keyArgument = rest.first {
                let key: String
                if keyArgument == "-string" {
                    rest.removeFirst()
                    guard let k = rest.popFirst() else { throw .failure("Key -string lacks a corresponding value") }
                    key = k
                } else if scalarFlags.contains(keyArgument) || compositeFlags.contains(keyArgument) {
                    throw .failure("Dictionary keys must be strings")
                } else {
                    rest.removeFirst()
                    key = keyArgument
                }
                guard !rest.isEmpty else { throw .failure("Key \(key) lacks a corresponding value") }
                entries[key] = try element(&rest)
            }
            return first == "-dict" ? .set(.dictionary(entries)) : .dictAdd(entries)
        default:
            var rest = args[...]
            let value = try element(&rest)
            if let extra = rest.first { throw .failure("Unexpected argument \(extra); leaving defaults unchanged.") }
            return .set(value)
        }
    }

    static let scalarFlags: Set<String> = ["-string", "-data", "-int", "-integer", "-float", "-bool", "-boolean", "-date"]
    static let compositeFlags: Set<String> = ["-array", "-array-add", "-dict", "-dict-add"]

    /// Parses one value (a flag and its argument, or an untyped value) from the front of `rest`.
    static func element(_ rest: inout ArraySlice<String>) throws(CommandFailure) -> PlistValue {
        let first = rest.removeFirst()
        if compositeFlags.contains(first) {
            throw .failure("Cannot nest composite types (arrays and dictionaries); exiting")
        }
        guard scalarFlags.contains(first) else { return try untyped(first) }
        guard let text = rest.popFirst() else { throw .usage("\(first) needs a value") }
        switch first {
        case "-string":
            return .string(text)
        case "-data":
            guard let bytes = ScalarParsing.hexData(text) else {
                if text.utf8.count % 2 == 1 && text.utf8.allSatisfy({ Hex.value(of: $0) != nil }) {
                    throw .usage("Could not parse \"\(text)\" as hex data: an odd number of hex digits (two make a byte); leaving defaults unchanged.")
                }
                throw .usage("Could not parse \"\(text)\" as hex data (use hex digits 0-9, a-f); leaving defaults unchanged.")
            }
            return .data(bytes)
        case "-int", "-integer":
            guard let n = ScalarParsing.integer(text) else {
                throw .usage("Could not parse \"\(text)\" as an integer (a whole number from \(Int64.min) to \(UInt64.max)); leaving defaults unchanged.")
            }
            return .integer(n)
        case "-float":
            guard let x = ScalarParsing.real(text) else {
                throw .usage("Could not parse \"\(text)\" as a float; leaving defaults unchanged.")
            }
            return .real(x)
        case "-bool", "-boolean":
            guard let b = ScalarParsing.bool(text) else {
                throw .usage("Could not parse \"\(text)\" as a boolean (use true, false, yes or no); leaving defaults unchanged.")
            }
            return .bool(b)
        default:  // -date
            guard let d = ScalarParsing.date(text) else {
                throw .usage("Could not parse \"\(text)\" as a date (use \"YYYY-MM-DD HH:MM:SS +0000\" or ISO 8601 such as 2025-04-07T12:30:13Z); leaving defaults unchanged.")
            }
            return .date(d)
        }
    }

    /// An untyped value: an old-style literal when it contains one of
    /// `"(){}[]<>`, otherwise a string with its backslash escapes applied.
    static func untyped(_ text: String) throws(CommandFailure) -> PlistValue {
        if text.contains(where: { "\"(){}[]<>".contains($0) }) {
            do { return try OldStyleText.parse(text) } catch {
                throw unparsable(text, error)
            }
        }
        do { return .string(try OldStyleText.unescape(text)) } catch {
            throw unparsable(text, error)
        }
    }

    /// The failure for a literal from the command line that does not parse:
    /// macOS's `Could not parse: <text>.  Try single-quoting it.` with the
    /// reason after the text, in the words `import` uses for a file
    /// (`… due to property list nests deeper than 2048 levels`), and the text
    /// cut short (``echo(_:)``).
    static func unparsable(_ text: String, _ reason: PlistError) -> CommandFailure {
        .failure("Could not parse: \(echo(text)) due to \(reason).  Try single-quoting it.")
    }

    /// At most this many characters of a literal are repeated in an error.
    static let echoedCharacters = 60

    /// `text` as an error repeats it: whole when short, else its first
    /// ``echoedCharacters`` characters, `…` and its length.
    static func echo(_ text: String) -> String {
        guard text.count > echoedCharacters else { return text }
        return String(text.prefix(echoedCharacters)) + "… (\(text.count) characters)"
    }
}
