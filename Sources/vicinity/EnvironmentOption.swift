import ArgumentParser
import Foundation

/// A command-line option that may also come from an environment variable, declared once: its names, help,
/// default and the reader of its text. The rule every such option follows is written here alone: the command
/// line wins over the environment, and either over the default; a refusal names both the flag and the
/// variable, since the value may have come from either.
struct EnvironmentOption<Value: Sendable>: NamedOption {
    let name: OptionName
    /// The value when neither the command line nor the environment gives one.
    let standard: Value
    /// Reads the text of the flag or of the variable.
    let read: @Sendable (String) throws(OptionRefusal) -> Value

    /// `shown` is the default as the help says it after "else"; nil when the help has nothing to say of it.
    init(
        _ flag: String, variable: String, valueName: String, abstract: String, standard: Value, shown: String?,
        note: String? = nil, read: @escaping @Sendable (String) throws(OptionRefusal) -> Value
    ) {
        name = OptionName(
            flag: flag, variable: variable, valueName: valueName, abstract: abstract, standard: shown, note: note)
        self.standard = standard
        self.read = read
    }

    /// The value given on the command line (`given`), else in the environment, else the default.
    func resolve(given: String?, environment: [String: String]) throws(ArgumentParser.ValidationError) -> Value {
        guard let text = given ?? environment[name.variable] else { return standard }
        do { return try read(text) } catch { throw name.refusal(error) }
    }
}

extension EnvironmentOption where Value: LosslessStringConvertible {
    /// For a default that the help shows as the option would be written: `8080`, `info`.
    init(
        _ flag: String, variable: String, valueName: String, abstract: String, standard: Value, note: String? = nil,
        read: @escaping @Sendable (String) throws(OptionRefusal) -> Value
    ) {
        self.init(
            flag, variable: variable, valueName: valueName, abstract: abstract, standard: standard,
            shown: String(standard), note: note, read: read)
    }
}

extension EnvironmentOption where Value == Duration {
    /// A length of time, written as `OptionDuration` reads it; the help shows the default the same way.
    static func duration(
        _ flag: String, variable: String, valueName: String, abstract: String, standard: Duration, note: String? = nil
    ) -> EnvironmentOption {
        EnvironmentOption(
            flag, variable: variable, valueName: valueName, abstract: abstract, standard: standard,
            shown: OptionDuration.text(standard), note: note, read: OptionDuration.read)
    }
}

/// An option given once for each value on the command line (`--trusted-proxy A --trusted-proxy B`) and as a
/// comma-separated list in its environment variable; none by default. Blank values are skipped.
struct EnvironmentListOption<Element: Sendable>: NamedOption {
    let name: OptionName
    /// Reads one value.
    let read: @Sendable (String) throws(OptionRefusal) -> Element

    /// `shown` says what having none means, after "else" in the help.
    init(
        _ flag: String, variable: String, valueName: String, abstract: String, shown: String, note: String? = nil,
        read: @escaping @Sendable (String) throws(OptionRefusal) -> Element
    ) {
        name = OptionName(
            flag: flag, variable: variable, valueName: valueName, abstract: abstract, standard: shown, note: note,
            listed: true)
        self.read = read
    }

    /// The values given on the command line, else those listed in the environment, else none.
    func resolve(given: [String], environment: [String: String]) throws(ArgumentParser.ValidationError) -> [Element] {
        let texts = given.isEmpty ? (environment[name.variable] ?? "").split(separator: ",").map(String.init) : given
        var values: [Element] = []
        for text in texts.map({ $0.trimmingCharacters(in: .whitespaces) }) where !text.isEmpty {
            do { values.append(try read(text)) } catch { throw name.refusal(error) }
        }
        return values
    }
}

/// What every entry of an option table has, whatever its value: for the help's list of variables.
protocol NamedOption: Sendable {
    var name: OptionName { get }
}

/// An option's names and its help: the flag, the environment variable that stands in for it, what the help
/// says of its default.
struct OptionName: Sendable {
    /// The long flag without its dashes: `port` for `--port`.
    let flag: String
    let variable: String
    let valueName: String
    let abstract: String
    /// The default as the help says it after "else"; nil when there is nothing to say.
    let standard: String?
    /// What the help adds after the default.
    let note: String?
    /// Whether the variable lists several values, separated by commas.
    var listed = false

    var long: String { "--\(flag)" }

    /// How messages name the option: `--port (or VICINITY_PORT)`.
    var named: String { "\(long) (or \(variable))" }

    var help: ArgumentHelp {
        let variable = "$\(self.variable)" + (listed ? " (comma-separated)" : "")
        let standard = "Default: \(variable)" + (self.standard.map { ", else \($0)" } ?? "") + "."
        return ArgumentHelp(abstract, discussion: [standard, note].compactMap { $0 }.joined(separator: " "), valueName: valueName)
    }

    /// The usage error for text the option's reader refused.
    func refusal(_ refusal: OptionRefusal) -> ArgumentParser.ValidationError {
        switch refusal {
        case .predicate(let text): ArgumentParser.ValidationError("\(named) \(text)")
        case .problem(let text): ArgumentParser.ValidationError("\(named): \(text)")
        }
    }

    /// The help's word on the environment for a command whose options are named `names`.
    static func environmentDiscussion(_ names: [OptionName]) -> String {
        "Every option may also come from the environment: \(names.map(\.variable).joined(separator: ", ")). "
            + "A command-line option wins over the environment, and either over the default."
    }
}

/// Why an option's text was refused.
enum OptionRefusal: Error, Equatable {
    /// What the value must be, said after the option's name: "must be at least 1, not 0".
    case predicate(String)
    /// A problem in words of its own, said after the option's name and a colon: "readers must be 1...64, not 0".
    case problem(String)
}

/// Readers of option text that several options share.
enum OptionText {
    static func wholeNumber(_ text: String) throws(OptionRefusal) -> Int {
        guard let number = Int(text) else { throw .predicate("must be a whole number, not \"\(text)\"") }
        return number
    }

    static func wholeNumber(_ text: String, atLeast minimum: Int) throws(OptionRefusal) -> Int {
        let number = try wholeNumber(text)
        guard number >= minimum else { throw .predicate("must be at least \(minimum), not \(number)") }
        return number
    }

    /// A TCP port number: 16 bits; 0 asks the system for a free one.
    static func port(_ text: String) throws(OptionRefusal) -> Int {
        let port = try wholeNumber(text)
        guard (0...Int(UInt16.max)).contains(port) else { throw .predicate("must be in 0...\(UInt16.max), not \(port)") }
        return port
    }

    /// Yes or no: `true`, `yes` or `1`, `false`, `no` or `0`, in any case.
    static func truth(_ text: String) throws(OptionRefusal) -> Bool {
        switch text.lowercased() {
        case "true", "yes", "1": return true
        case "false", "no", "0": return false
        default: throw .predicate("must be true or false, not \"\(text)\"")
        }
    }

    /// The text as given, for options whose meaning is checked where it is used (folders, URLs).
    static func verbatim(_ text: String) -> String { text }
}

/// A length of time as options write it: a positive whole number of seconds, minutes, hours or days (`90s`,
/// `15m`, `24h`, `30d`).
enum OptionDuration {
    /// Largest first, so that `text` writes a duration in the largest unit that divides it.
    private static let units: [(suffix: Character, seconds: Int64)] = [("d", 86_400), ("h", 3600), ("m", 60), ("s", 1)]
    /// Ten years: far past any setting, so a longer one is a slip of the keyboard, and the seconds stay well
    /// within `Int64`.
    private static let longestSeconds: Int64 = 3650 * 86_400

    static func read(_ text: String) throws(OptionRefusal) -> Duration {
        guard let unit = units.first(where: { $0.suffix == text.last }), let count = Int64(text.dropLast()), count > 0,
            count <= longestSeconds / unit.seconds
        else { throw .predicate("must be a positive whole number with s, m, h or d, such as 24h; not \"\(text)\"") }
        return .seconds(count * unit.seconds)
    }

    /// The duration as `read` takes it, in whole seconds.
    static func text(_ duration: Duration) -> String {
        let seconds = duration.components.seconds
        guard let unit = units.first(where: { seconds % $0.seconds == 0 }) else { return "\(seconds)s" }
        return "\(seconds / unit.seconds)\(unit.suffix)"
    }
}

extension Option where Value == String? {
    /// An option whose flag and help are its table entry's; the entry reads its text (`resolve`).
    init(_ entry: some NamedOption) {
        self.init(name: .customLong(entry.name.flag), help: entry.name.help)
    }
}

extension Option where Value == [String] {
    /// A repeatable option whose flag and help are its table entry's; the entry reads its texts (`resolve`).
    init(wrappedValue: [String], _ entry: some NamedOption) {
        self.init(wrappedValue: wrappedValue, name: .customLong(entry.name.flag), help: entry.name.help)
    }
}
