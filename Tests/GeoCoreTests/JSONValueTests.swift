import Foundation
import GeoCore
import GeoTestSupport
import Testing

@Suite("JSON values written as bytes")
struct JSONValueTests {
    /// The encoder the service used before writing JSON itself; its output is the reference.
    private func foundationJSON(_ value: JSONValue) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    private func written(_ value: JSONValue) -> String { String(decoding: value.jsonBytes, as: UTF8.self) }

    @Test("escapes quotes, backslashes and control characters and leaves slashes and other text as UTF-8")
    func escaping() {
        let value = JSONValue.object([
            "b": .array([.number(1), .number(2.5), .string("say \"hi\"\\ /\n\r\t\u{01}\u{1F} Wat Pho วัดโพธิ์ 😀")]),
            "a": .null,
            "c": .bool(true),
        ])
        #expect(written(value) == #"{"a":null,"b":[1,2.5,"say \"hi\"\\ /\n\r\t\u0001\u001f Wat Pho วัดโพธิ์ 😀"],"c":true}"#)
    }

    @Test("numbers: whole ones without a fraction, others in shortest round-trip form, never NaN or infinity")
    func numbers() {
        #expect(written(.number(0)) == "0")
        #expect(written(.number(-0.0)) == "0")
        #expect(written(.number(-118.112526)) == "-118.112526")
        #expect(written(.number(50.276980286336276)) == "50.276980286336276")
        #expect(written(.number(1e-7)) == "1e-07")
        #expect(written(.number(1e300)) == "1e+300")
        #expect(written(.number(.nan)) == "null")
        #expect(written(.number(.infinity)) == "null")
    }

    @Test("what it writes reads back as the same value, and equals JSONEncoder's sorted output, for random values")
    func matchesFoundation() throws {
        var generator = SeededGenerator(seed: 7)
        for _ in 0..<500 {
            let value = randomValue(depth: 0, using: &generator)
            let bytes = value.jsonBytes
            #expect(try JSONDecoder().decode(JSONValue.self, from: Data(bytes)) == value)
            #expect(written(value) == (try foundationJSON(value)))
        }
    }

    @Test("parsing what was written gives the value back, for random values")
    func parseRoundTrip() throws {
        var generator = SeededGenerator(seed: 11)
        for _ in 0..<500 {
            let value = randomValue(depth: 0, using: &generator)
            #expect(try JSONValue(jsonBytes: value.jsonBytes) == value)
        }
    }

    @Test("parsing agrees with JSONDecoder on whitespace, every escape and surrogate pairs")
    func parseAgreesWithFoundation() throws {
        let documents = [
            #" { "a" : [ 1 , -0.5e-3 , 2E+2 , true , false , null ] , "b" : { } , "c" : [ ] } "#,
            #"["\"\\\/\b\f\n\r\t", "\u00e9\u0041", "\ud83d\ude00", "วัดโพธิ์", "a/b"]"#,
            #"{"dup":1,"dup":2}"#,
            "\t\r\n\"only a string\"\n",
            "-0",
            "123456789012345678",
        ]
        for document in documents {
            let parsed = try JSONValue(jsonBytes: Array(document.utf8))
            #expect(parsed == (try JSONDecoder().decode(JSONValue.self, from: Data(document.utf8))), "\(document)")
        }
        #expect(try JSONValue(jsonBytes: Array(#""\ud83d\ude00""#.utf8)) == .string("😀"))
    }

    @Test("parsing refuses what is not one JSON text, saying where")
    func parseRefusesMalformed() {
        let texts = [
            "", " ", "[", "[1,]", "[1 2]", #"{"a":1,}"#, #"{"a" 1}"#, "{a:1}", "01", "1.", ".5", "-", "1e", "+1",
            "nan", "Infinity", "tru", "nul", "[1] x", #""\x""#, #""\ud800""#, #""\ud800\u0041""#, #""\udc00""#,
            #""\u12""#, "\"a\nb\"", #""open"#, "1e400",
        ]
        let nested = Array(repeating: UInt8(ascii: "["), count: 300) + Array(repeating: UInt8(ascii: "]"), count: 300)
        let malformed = texts.map { Array($0.utf8) } + [[0x22, 0xFF, 0x22], nested]
        for bytes in malformed {
            #expect(throws: JSONValue.ParseError.self, "\(String(decoding: bytes, as: UTF8.self))") {
                try JSONValue(jsonBytes: bytes)
            }
        }
        let error = #expect(throws: JSONValue.ParseError.self) { try JSONValue(jsonBytes: Array("[1 2]".utf8)) }
        #expect(error?.description == "invalid JSON at byte 3: expected , or ] in an array")
    }

    @Test("text is the string itself for strings, nil for null, and the JSON form otherwise")
    func text() {
        #expect(JSONValue.string("a\"b").text == "a\"b")
        #expect(JSONValue.null.text == nil)
        #expect(JSONValue.number(42).text == "42")
        #expect(JSONValue.array([.string("x"), .bool(false)]).text == #"["x",false]"#)
    }

    private func randomValue(depth: Int, using generator: inout SeededGenerator) -> JSONValue {
        let pieces = ["a", "Hall of Science", "\"", "\\", "/", "\n", "\u{07}", "é", "วัด", "😀", " ", "tab\t"]
        func randomString() -> String {
            (0..<Int.random(in: 0...4, using: &generator)).map { _ in pieces.randomElement(using: &generator)! }.joined()
        }
        switch Int.random(in: 0..<(depth < 3 ? 7 : 5), using: &generator) {
        case 0: return .null
        case 1: return .bool(Bool.random(using: &generator))
        case 2: return .number(Double(Int.random(in: -1_000_000...1_000_000, using: &generator)))
        case 3: return .number(Double.random(in: -180...180, using: &generator))
        case 4: return .string(randomString())
        case 5: return .array((0..<Int.random(in: 0...4, using: &generator)).map { _ in randomValue(depth: depth + 1, using: &generator) })
        default:
            var members: [String: JSONValue] = [:]
            for _ in 0..<Int.random(in: 0...4, using: &generator) {
                members[randomString()] = randomValue(depth: depth + 1, using: &generator)
            }
            return .object(members)
        }
    }
}
