import AppHomeSystem
import CommandSupport
import KeyedArchive
import PropertyList

/// `plutil`: macOS's property-list tool, verb for verb, with keyed archives
/// shown as their object graph (`-unarchive`) and made from it (`-archive`).
///
/// Messages and exit statuses are macOS's (and the Swift toolchain's
/// `plutil`, where it agrees): a command-line error is its message alone on
/// standard error and status 1; a file that fails is `<file>: <why>` on
/// standard error, the other files are still done, and the status is 1.
/// Every file written is replaced atomically and durably
/// (``FileSystem/writeAtomicallyKeepingMode(_:to:)``): a failure leaves it as it was.
public enum PlutilCommand {
    /// Runs `plutil` with the arguments after the program name; returns the exit status.
    public static func run(_ arguments: [String], console: Console) -> Int32 {
        do {
            let command = try Invocation.parse(arguments)
            if case .help = command.verb {
                console.out(HelpText.text)
                return 0
            }
            if case .version = command.verb {
                console.out(AppHomeVersion.line(command: "plutil"))
                return 0
            }
            return command.execute(console: console) ? 0 : 1
        } catch {
            console.err(error.text + "\n")
            return 1
        }
    }
}

/// A message `plutil` prints as it is.
enum PlutilError: Error {
    case message(String)

    var text: String {
        switch self { case .message(let m): return m }
    }
}

/// The formats `plutil` writes.
enum OutputFormat: Equatable {
    case xml, binary, json, swift, objc, raw, type, openStep

    init(argument: String) throws(PlutilError) {
        switch argument {
        case "xml1": self = .xml
        case "binary1": self = .binary
        case "json": self = .json
        case "swift": self = .swift
        case "objc": self = .objc
        case "raw": self = .raw
        default: throw .message("Unknown format specifier: \(argument)")
        }
    }

    init(_ format: PlistFormat) {
        switch format {
        case .binary: self = .binary
        case .xml: self = .xml
        case .json: self = .json
        case .openStep: self = .openStep
        }
    }
}

/// A parsed command line.
struct Invocation {
    enum Verb {
        case help
        case version
        case lint
        case convert(OutputFormat)
        case print
        case insert(KeyPath, PlistValue, replacing: Bool, appending: Bool)
        case remove(KeyPath)
        case extract(KeyPath, OutputFormat, expect: String?)
        case type(KeyPath, expect: String?)
        case create(OutputFormat)
    }

    var verb: Verb
    var paths: [String] = []
    var silent = false
    var readable = false
    var newline = true
    var outputPath: String?
    var outputExtension: String?
    var unarchive = false
    var archive = false

    static func parse(_ arguments: [String]) throws(PlutilError) -> Invocation {
        guard let first = arguments.first else { throw .message("No files specified.") }
        var rest = Array(arguments.dropFirst())[...]
        let verb: Verb
        switch first {
        case "-help", "--help":
            return Invocation(verb: .help)
        case "--version":
            return Invocation(verb: .version)
        case "-lint":
            verb = .lint
        case "-convert":
            guard let format = rest.popFirst() else { throw .message("Missing format specifier for command.") }
            verb = .convert(try OutputFormat(argument: format))
        case "-p":
            verb = .print
        case "-insert", "-replace":
            verb = try insertion(&rest, replacing: first == "-replace")
        case "-remove":
            guard let path = rest.popFirst() else { throw .message("'Remove' requires a key path.") }
            verb = .remove(KeyPath(path))
        case "-extract":
            guard let path = rest.popFirst(), let format = rest.popFirst() else {
                throw .message("'Extract' requires a key path and a plist format.")
            }
            let f = try OutputFormat(argument: format)
            verb = .extract(KeyPath(path), f, expect: try expectation(&rest))
        case "-type":
            guard let path = rest.popFirst() else { throw .message("'Extract' requires a key path and a plist format.") }
            verb = .type(KeyPath(path), expect: try expectation(&rest))
        case "-create":
            guard let format = rest.popFirst() else { throw .message("'Create' requires a plist format.") }
            let f = try OutputFormat(argument: format)
            guard f == .xml || f == .binary || f == .json else { throw .message("Cannot create a \(format) property list (use xml1, binary1 or json)") }
            verb = .create(f)
        default:
            verb = .lint
            rest = arguments[...]
        }
        var invocation = Invocation(verb: verb)
        try invocation.scanOptions(rest)
        try invocation.validate()
        return invocation
    }

    private static func expectation(_ rest: inout ArraySlice<String>) throws(PlutilError) -> String? {
        guard rest.first == "-expect" else { return nil }
        rest.removeFirst()
        guard let type = rest.popFirst() else { throw .message("-expect requires a type argument.") }
        guard Formatting.typeNames.contains(type) else { throw .message("-expect type [\(type)] not valid.") }
        return type
    }

    private static func insertion(_ rest: inout ArraySlice<String>, replacing: Bool) throws(PlutilError) -> Verb {
        let usage = PlutilError.message("'Insert' and 'Replace' require a key path, a type, and a value.")
        guard let path = rest.popFirst(), let type = rest.popFirst() else { throw usage }
        let value: PlistValue
        func next() throws(PlutilError) -> String {
            guard let v = rest.popFirst() else { throw usage }
            return v
        }
        switch type {
        case "-bool":
            let v = try next().lowercased()
            value = .bool(v == "true" || v == "yes")
        case "-integer": value = .integer(Int128(ValueParsing.longLong(try next())))
        case "-float": value = .real(ValueParsing.double(try next()))
        case "-string": value = .string(try next())
        case "-date": value = .date(try ValueParsing.date(try next()))
        case "-data": value = .data(try ValueParsing.base64(try next()))
        case "-xml":
            let text = try next()
            do { value = try PlistCodec.decode(Array(text.utf8)) } catch { throw .message("Unable to parse xml property list: \(error)") }
        case "-json":
            let text = try next()
            do { value = try PlistCodec.decodePlainJSON(Array(text.utf8)) } catch { throw .message("Unable to parse JSON: \(error)") }
        case "-dictionary": value = .dictionary([:])
        case "-array": value = .array([])
        default: throw .message("Unknown insert or replace type \(type)")
        }
        var appending = false
        if rest.first == "-append" {
            rest.removeFirst()
            appending = !replacing
        }
        return .insert(KeyPath(path), value, replacing: replacing, appending: appending)
    }

    private mutating func scanOptions(_ arguments: ArraySlice<String>) throws(PlutilError) {
        var rest = arguments
        while let arg = rest.popFirst() {
            switch arg {
            case "--": paths.append(contentsOf: rest); rest = []
            case "-s": silent = true
            case "-r": readable = true
            case "-n": newline = false
            case "-unarchive": unarchive = true
            case "-archive": archive = true
            case "-o":
                guard let v = rest.popFirst() else { throw .message("Missing argument for -o.") }
                outputPath = v
            case "-e":
                guard let v = rest.popFirst() else { throw .message("Missing argument for -e.") }
                outputExtension = v
            default:
                if arg.hasPrefix("-") && arg.count > 1 { throw .message("unrecognized option: \(arg)") }
                paths.append(arg)
            }
        }
        guard !paths.isEmpty else { throw .message("No files specified.") }
    }

    private func validate() throws(PlutilError) {
        switch verb {
        case .lint:
            if outputPath != nil { throw .message("-o is not used with -lint.") }
            if outputExtension != nil { throw .message("-e is not used with -lint.") }
        case .print:
            if outputPath != nil { throw .message("-o is not used with -p.") }
            if outputExtension != nil { throw .message("-e is not used with -p.") }
        default: break
        }
        if unarchive {
            switch verb {
            case .print, .convert(.xml), .convert(.json), .extract: break
            default: throw .message("-unarchive is used only with -p, -convert xml1|json and -extract.")
            }
        }
        if archive {
            switch verb {
            case .convert(.xml), .convert(.binary): break
            default: throw .message("-archive is used only with -convert binary1|xml1.")
            }
            if unarchive { throw .message("-archive and -unarchive cannot be used together.") }
        }
    }
}
