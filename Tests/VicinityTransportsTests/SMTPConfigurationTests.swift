import Testing
@testable import VicinityTransports

@Suite("The relay's settings, its replies and the classification of failures")
struct SMTPConfigurationTests {
    @Test("smtp://user@host:port is read with the submission port, opportunistic TLS and a password given apart, shown without it")
    func submissionURL() throws {
        let configuration = try SMTPConfiguration(url: "smtp://mailer@relay.example.org", password: "s3cret")
        #expect(configuration.host == "relay.example.org")
        #expect(configuration.port == 587)
        #expect(!configuration.implicitTLS)
        #expect(configuration.tls == .opportunistic)
        #expect(configuration.credentials == SMTPCredentials(username: "mailer", password: "s3cret"))
        #expect(configuration.description == "smtp://mailer@relay.example.org:587")
        #expect(configuration.connectTimeout == .seconds(10))
        #expect(configuration.replyTimeout == .seconds(30))

        let anonymous = try SMTPConfiguration(url: "smtp://localhost:2525", tls: .disabled)
        #expect(anonymous.credentials == nil)
        #expect(anonymous.port == 2525)
        #expect(anonymous.description == "smtp://localhost:2525 (TLS none)")
    }

    @Test("smtps:// means TLS from the first octet on port 465, and a policy other than required is refused")
    func implicitTLSURL() throws {
        let configuration = try SMTPConfiguration(url: "smtps://relay.example.org")
        #expect(configuration.implicitTLS)
        #expect(configuration.port == 465)
        #expect(configuration.tls == .required)
        #expect(configuration.description == "smtps://relay.example.org:465")
        #expect(throws: SMTPConfiguration.Problem.self) { try SMTPConfiguration(url: "smtps://relay.example.org", tls: .disabled) }
    }

    @Test("a password in the URL is percent-decoded and never shown; the user name is shown as the URL writes it")
    func passwordInURL() throws {
        let configuration = try SMTPConfiguration(url: "smtp://mailer%40example.org:p%40ss%3Aw%2Fd@[::1]:2525", tls: .required)
        #expect(configuration.credentials?.username == "mailer@example.org")
        #expect(configuration.credentials?.password == "p@ss:w/d")
        #expect(configuration.host == "::1")
        #expect(configuration.description == "smtp://mailer%40example.org@[::1]:2525 (TLS required)")
        #expect(!String(reflecting: configuration).contains("p@ss"))
        #expect(!"\(configuration.credentials.map { "\($0)" } ?? "")".contains("p@ss"))
    }

    @Test("URLs and combinations this client cannot use are refused in words", arguments: [
        ("http://relay.example.org", nil as String?),
        ("smtp://", nil),
        ("smtp://relay.example.org:0", nil),
        ("smtp://relay.example.org/path", nil),
        ("smtp://relay.example.org?tls=none", nil),
        ("smtp://mailer:one@relay.example.org", "two"),
        ("smtp://mailer@relay.example.org", nil),
        ("smtp://:secret@relay.example.org", nil),
    ])
    func refusedURLs(url: String, password: String?) {
        #expect(throws: SMTPConfiguration.Problem.self, "\(url)") { try SMTPConfiguration(url: url, password: password) }
    }

    @Test("the EHLO name must be a domain name")
    func clientName() throws {
        var configuration = try SMTPConfiguration(url: "smtp://relay.example.org")
        try configuration.setClientName("front-1.vicinity.example")
        #expect(configuration.clientName == "front-1.vicinity.example")
        #expect(throws: SMTPConfiguration.Problem.self) { try configuration.setClientName("bad name\r\nMAIL FROM:<x@y>") }
        #expect(configuration.clientName == "front-1.vicinity.example")
    }

    @Test("a CA file that cannot be read is found when the client is made, not at the first message")
    func missingCAFile() throws {
        var configuration = try SMTPConfiguration(url: "smtp://relay.example.org")
        configuration.certificateAuthorityFile = "/nonexistent/ca.pem"
        #expect(throws: SMTPConfiguration.Problem.self) { try SMTPClient(configuration: configuration) }
    }

    @Test("replies are read line by line: multi-line replies end at the line with a space, and their code must not change")
    func replies() throws {
        var parser = SMTPReplyParser()
        parser.append(Array("250-relay.test\r\n250-SIZE 33554432\r\n250-AUTH PLAIN LOGIN\r\n250 STARTTLS\r\n220 2.0.0 Ready".utf8))
        let ehlo = try #require(try parser.nextReply())
        #expect(ehlo.code == 250)
        #expect(ehlo.lines == ["relay.test", "SIZE 33554432", "AUTH PLAIN LOGIN", "STARTTLS"])
        let extensions = SMTPExtensions(ehloReply: ehlo)
        #expect(extensions.offersStartTLS)
        #expect(extensions.authenticationMechanisms == ["PLAIN", "LOGIN"])
        #expect(try parser.nextReply() == nil, "the 220 line is not finished yet")
        parser.append(Array("\r\n354\n".utf8))
        #expect(try parser.nextReply() == SMTPReply(code: 220, lines: ["2.0.0 Ready"]))
        #expect(try parser.nextReply() == SMTPReply(code: 354, lines: [""]), "a bare LF and a code alone are read too")
        #expect(!parser.hasBufferedOctets)

        for garbage in ["250-one\r\n251 two\r\n", "hello\r\n", "25\r\n", "250_x\r\n", "650 no\r\n", String(repeating: "x", count: 3000)] {
            var parser = SMTPReplyParser()
            parser.append(Array(garbage.utf8))
            #expect(throws: SMTPChannelFailure.self, "\(garbage.prefix(20))") { while try parser.nextReply() != nil {} }
        }
    }

    @Test("AUTH=... from older relays is read as AUTH, and PLAIN is chosen over LOGIN")
    func authenticationChoice() {
        let old = SMTPExtensions(ehloReply: SMTPReply(code: 250, lines: ["relay", "AUTH=LOGIN", "AUTH LOGIN CRAM-MD5"]))
        #expect(old.authenticationMechanisms == ["LOGIN", "CRAM-MD5"])
        #expect(SMTPAuthentication.choose(offered: ["LOGIN", "PLAIN"]) == .plain)
        #expect(SMTPAuthentication.choose(offered: ["LOGIN", "CRAM-MD5"]) == .login)
        #expect(SMTPAuthentication.choose(offered: ["CRAM-MD5", "XOAUTH2"]) == nil)
        // RFC 4616 §4's example: authcid "tim", password "tanstaaftanstaaf".
        #expect(SMTPAuthentication.plainResponse(SMTPCredentials(username: "tim", password: "tanstaaftanstaaf")) == "AHRpbQB0YW5zdGFhZnRhbnN0YWFm")
    }

    @Test("failures are sorted for the outbox: 4xx and broken connections transient, 5xx to the message permanent, 5xx to the set-up misconfigured")
    func dispositions() {
        let temporary = SMTPReply(code: 451, lines: ["4.3.0 later"])
        let unknownUser = SMTPReply(code: 550, lines: ["5.1.1 unknown user"])
        let authRequired = SMTPReply(code: 530, lines: ["5.7.0 Authentication required"])
        let badCredentials = SMTPReply(code: 535, lines: ["5.7.8 Authentication credentials invalid"])
        let cases: [(SMTPError, SMTPError.Disposition)] = [
            (SMTPError(step: .recipient, reason: .rejected(temporary)), .transient),
            (SMTPError(step: .greeting, reason: .rejected(SMTPReply(code: 421, lines: ["busy"]))), .transient),
            (SMTPError(step: .recipient, reason: .rejected(unknownUser)), .permanent),
            (SMTPError(step: .message, reason: .rejected(SMTPReply(code: 554, lines: ["rejected"]))), .permanent),
            (SMTPError(step: .data, reason: .rejected(SMTPReply(code: 554, lines: ["no valid recipients"]))), .permanent),
            (SMTPError(step: .mailFrom, reason: .rejected(authRequired)), .misconfigured),
            (SMTPError(step: .mailFrom, reason: .rejected(SMTPReply(code: 553, lines: ["sender not allowed"]))), .misconfigured),
            (SMTPError(step: .authentication, reason: .rejected(badCredentials)), .misconfigured),
            (SMTPError(step: .greeting, reason: .rejected(SMTPReply(code: 554, lines: ["no service"]))), .misconfigured),
            (SMTPError(step: .connect, reason: .connectionFailed("refused")), .transient),
            (SMTPError(step: .message, reason: .timedOut), .transient),
            (SMTPError(step: .tlsHandshake, reason: .tlsFailed("bad certificate")), .transient),
            (SMTPError(step: .recipient, reason: .connectionClosed), .transient),
            (SMTPError(step: .startTLS, reason: .startTLSNotOffered), .misconfigured),
            (SMTPError(step: .authentication, reason: .noCommonAuthentication(offered: ["CRAM-MD5"])), .misconfigured),
            (SMTPError(step: .authentication, reason: .credentialsNeedTLS), .misconfigured),
        ]
        for (error, disposition) in cases {
            #expect(error.disposition == disposition, "\(error)")
        }
        #expect(SMTPError(step: .recipient, reason: .rejected(unknownUser)).description == "SMTP RCPT TO: the relay answered 550 5.1.1 unknown user (permanent)")
    }

    @Test("a relay's reply that repeats a credential has it withheld")
    func withholding() {
        let reply = SMTPReply(code: 535, lines: ["failed for tim/tanstaaf", "token AHRpbQB0YW5zdGFhZg=="])
        #expect(reply.withholding(["tanstaaf", "AHRpbQB0YW5zdGFhZg=="]).lines == ["failed for tim/<withheld>", "token <withheld>"])
    }
}
