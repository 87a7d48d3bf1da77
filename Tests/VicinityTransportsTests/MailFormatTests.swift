import Foundation
import Testing
@testable import VicinityTransports

@Suite("Mail values and their written form")
struct MailFormatTests {
    func message(subject: String = "Your code", body: String = "123456", from: String = "Vicinity <noreply@vicinity.test>") throws -> MailMessage {
        try MailMessage(from: Mailbox(parsing: from), to: Mailbox(MailAddress("student@csulb.test")), subject: subject, body: body)
    }

    func headerSection(_ message: MailMessage) -> String {
        String(decoding: MailFormat.render(message), as: UTF8.self).components(separatedBy: "\r\n\r\n")[0]
    }

    @Test("addresses are checked: local@domain with a dot-atom local part and a host name or address literal")
    func addresses() throws {
        for good in ["a@b", "first.last+tag@mail.example.org", "x@[127.0.0.1]", "x@[IPv6:2001:db8::1]", "o'brien@example.ie"] {
            #expect(throws: Never.self, "\(good)") { try MailAddress(good) }
        }
        for bad in ["", "plain", "@example.org", "a@", "a b@example.org", "a..b@example.org", ".a@example.org", "a@-example.org",
                    "a@exa_mple.org", "a@example.org\r\nBcc: victim@example.org", "ä@example.org", "<a@example.org>",
                    String(repeating: "a", count: 65) + "@example.org"] {
            #expect(throws: MailProblem.self, "\(bad)") { try MailAddress(bad) }
        }
    }

    @Test("a sender is read as an address, <address> or Name <address>, quoted or not")
    func mailboxes() throws {
        #expect(try Mailbox(parsing: "noreply@vicinity.test") == Mailbox(MailAddress("noreply@vicinity.test")))
        #expect(try Mailbox(parsing: "<noreply@vicinity.test>").displayName == nil)
        #expect(try Mailbox(parsing: "Vicinity <noreply@vicinity.test>").displayName == "Vicinity")
        #expect(try Mailbox(parsing: "\"Vicinity, the map\" <noreply@vicinity.test>").displayName == "Vicinity, the map")
        #expect(throws: MailProblem.self) { try Mailbox(parsing: "Vicinity <not an address>") }
    }

    @Test("header injection is impossible: a line break or other control character in a subject or a name is refused")
    func headerInjection() throws {
        for subject in ["Code\r\nBcc: victim@example.org", "Code\nX: y", "Code\rX", "tab\there", "nul\u{0}"] {
            #expect(throws: MailProblem.self, "\(subject.debugDescription)") { try message(subject: subject) }
        }
        #expect(throws: MailProblem.self) { try Mailbox(MailAddress("a@b.test"), displayName: "Eve\r\nBcc: victim@example.org") }
        #expect(throws: MailProblem.self) { try MessageID("<a\r\n@b>") }
    }

    @Test("an ASCII subject and sender name that fit are written as they are; a name with specials is quoted")
    func plainHeaders() throws {
        let header = headerSection(try message(subject: "Your Vicinity code"))
        #expect(header.contains("\r\nSubject: Your Vicinity code\r\n"))
        #expect(header.contains("\r\nFrom: Vicinity <noreply@vicinity.test>\r\n"))
        #expect(header.contains("\r\nTo: student@csulb.test\r\n"))
        let named = try MailMessage(
            from: Mailbox(MailAddress("noreply@vicinity.test"), displayName: "Vicinity, \"beta\""),
            to: Mailbox(MailAddress("student@csulb.test")), subject: "Code", body: "")
        #expect(headerSection(named).contains("\r\nFrom: \"Vicinity, \\\"beta\\\"\" <noreply@vicinity.test>\r\n"))
    }

    @Test("a subject that is not plain ASCII, or too long for a line, becomes encoded-words of whole characters, every line at most 76")
    func encodedSubject() throws {
        let subject = String(repeating: "👨‍👩‍👧 ครอบครัว ", count: 12) + "=?not a word?="
        let header = headerSection(try message(subject: subject))
        let subjectLines = header.components(separatedBy: "\r\n").drop { !$0.hasPrefix("Subject:") }.prefix { $0.hasPrefix("Subject:") || $0.hasPrefix(" ") }
        #expect(subjectLines.count > 1, "folded")
        for line in subjectLines { #expect(line.utf8.count <= HeaderText.maximumLineLength, "\(line)") }
        // Decoding the words one by one gives whole characters each time, and all of them the subject.
        let words = subjectLines.joined(separator: " ").split(separator: " ").filter { $0.hasPrefix("=?UTF-8?B?") }
        let pieces = try words.map { word -> String in
            let base64 = word.dropFirst(HeaderText.wordPrefix.count).dropLast(HeaderText.wordSuffix.count)
            let data = try #require(Data(base64Encoded: String(base64)))
            return try #require(String(data: data, encoding: .utf8), "a word holds whole characters")
        }
        #expect(pieces.joined() == subject)
        // A long ASCII subject is encoded too, so its line stays short.
        let long = String(repeating: "a", count: 120)
        #expect(headerSection(try message(subject: long)).contains("Subject: =?UTF-8?B?"))
    }

    @Test("the Date header is RFC 5322 in UTC, in English whatever the locale")
    func dateHeader() throws {
        #expect(MailDate.text(Date(timeIntervalSince1970: 0)) == "Thu, 01 Jan 1970 00:00:00 +0000")
        #expect(MailDate.text(Date(timeIntervalSince1970: 1_751_360_707)) == "Tue, 01 Jul 2025 09:05:07 +0000")
        #expect(MailDate.text(Date(timeIntervalSince1970: 1_767_225_599)) == "Wed, 31 Dec 2025 23:59:59 +0000")
    }

    @Test("message ids are <left@right>, new ones random on the sender's domain, and read back as written")
    func messageIDs() throws {
        let first = MessageID.random(domain: "vicinity.test")
        let second = MessageID.random(domain: "vicinity.test")
        #expect(first != second)
        #expect(first.left.count == 32)
        #expect(try MessageID(first.description) == first)
        #expect(try MessageID("abc.def@host.example").description == "<abc.def@host.example>")
        for bad in ["", "<>", "no-at", "<a b@c>", "<a@b c>"] {
            #expect(throws: MailProblem.self, "\(bad)") { try MessageID(bad) }
        }
    }

    @Test("quoted-printable keeps ASCII readable, escapes = and every other octet, encodes a trailing space, and keeps lines at most 76")
    func quotedPrintable() {
        func encoded(_ text: String) -> String { String(decoding: QuotedPrintable.encode(text), as: UTF8.self) }
        #expect(encoded("Your code is 482913.") == "Your code is 482913.\r\n")
        #expect(encoded("1 + 1 = 2") == "1 + 1 =3D 2\r\n")
        #expect(encoded("trailing \nspace\t") == "trailing=20\r\nspace=09\r\n")
        #expect(encoded("ก") == "=E0=B8=81\r\n")
        #expect(encoded("a\r\nb\rc\nd\n") == "a\r\nb\r\nc\r\nd\r\n", "every line break becomes CRLF")
        #expect(encoded("") == "\r\n")
        let long = encoded(String(repeating: "ทดสอบ=x ", count: 40))
        for line in long.components(separatedBy: "\r\n") {
            #expect(line.utf8.count <= QuotedPrintable.maximumLineLength, "\(line)")
            // A soft break never splits an =XX: no = in the two characters before it.
            if line.hasSuffix("=") { #expect(!line.dropLast().suffix(2).contains("="), "\(line)") }
        }
    }

    @Test("the data is made transparent: period lines get another period, bare line breaks become CRLF, and the end is CRLF . CRLF")
    func transparency() {
        func data(_ text: String) -> String { String(decoding: SMTPData.transparent(Array(text.utf8)), as: UTF8.self) }
        #expect(data("a\r\n.\r\n..b\r\n") == "a\r\n..\r\n...b\r\n.\r\n")
        #expect(data(".first\nlast") == "..first\r\nlast\r\n.\r\n")
        #expect(data("a.b\r\n") == "a.b\r\n.\r\n")
        #expect(data("") == ".\r\n")
    }
}
