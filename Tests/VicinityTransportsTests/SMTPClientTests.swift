import Foundation
import Logging
import MailTestSupport
import Testing
import VicinityTransports

/// The client against a real relay on loopback (aiosmtpd, `Support/smtp_server.py`), never a stand-in for it.
/// Every wait is bounded: the client's own timeouts, the relay's start-up wait, and the suite's time limit.
@Suite("SMTP submission to a real relay", .enabled(if: RelayTools.available, RelayTools.howToInstall), .timeLimit(.minutes(2)))
struct SMTPClientTests {
    static let sender = "noreply@vicinity.test"
    static let recipient = "student@csulb.test"

    /// Thai and emoji in the subject, the sender's name and the body; lines that start with a period, one that
    /// is a lone period (which would end the data early if not stuffed), a line longer than a quoted-printable
    /// line, an `=`, and a trailing space.
    static let subject = "รหัสยืนยันของคุณ 🔑 สำหรับ Vicinity: ใช้ได้ 15 นาที"
    static let body = """
        สวัสดีค่ะ 👋
        Your code is 482913. It works for 15 minutes.
        .hidden line that starts with a period
        .
        ..two periods
        A long line: \(String(repeating: "ทดสอบ ", count: 20))end
        1 + 1 = 2 and a trailing space\u{20}
        last line
        """

    func message(messageID: MessageID? = nil, date: Date = Date()) throws -> MailMessage {
        try MailMessage(
            from: Mailbox(MailAddress(Self.sender), displayName: "Vicinity ใกล้ฉัน"),
            to: Mailbox(MailAddress(Self.recipient)),
            subject: Self.subject, body: Self.body, messageID: messageID, date: date)
    }

    func client(_ url: String, password: String? = nil, tls: SMTPConfiguration.TLSPolicy? = nil, trustTestCertificate: Bool = false,
                logs: LogRecorder = LogRecorder()) throws -> SMTPClient {
        var configuration = try SMTPConfiguration(url: url, password: password, tls: tls)
        if trustTestCertificate { configuration.certificateAuthorityFile = try TestCertificate.shared.get().certificateFile }
        // Short enough for the failure cases to be quick, long enough for a busy machine's relay to answer.
        configuration.replyTimeout = .seconds(10)
        configuration.connectTimeout = .seconds(10)
        return try SMTPClient(configuration: configuration, logger: logs.logger)
    }

    /// The error `send` threw; a failed expectation when it threw none.
    func failure(sending message: MailMessage, with client: SMTPClient) async -> SMTPError? {
        do {
            try await client.send(message)
            Issue.record("the send succeeded where it should have failed")
            return nil
        } catch {
            return error
        }
    }

    @Test("a message arrives with exactly the headers written, its Thai and emoji subject, name and body decode as sent, and period lines survive")
    func plainDelivery() async throws {
        let relay = try await TestRelay()
        defer { relay.stop() }
        let id = try MessageID("<4f1c2a9e@vicinity.test>")
        let sent = try message(messageID: id, date: Date(timeIntervalSince1970: 1_751_360_707))
        try await client("smtp://127.0.0.1:\(relay.port)").send(sent)

        let received = try relay.received()
        try #require(received.count == 1)
        let mail = received[0]
        #expect(mail.mailFrom == Self.sender)
        #expect(mail.rcptTos == [Self.recipient])
        #expect(!mail.tls, "the relay offers no STARTTLS, so the opportunistic client sent in the clear")
        #expect(mail.headers.map(\.name) == [
            "Date", "From", "To", "Subject", "Message-ID", "MIME-Version", "Content-Type", "Content-Transfer-Encoding",
        ])
        let headers = Dictionary(mail.headers.map { ($0.name, $0.value) }, uniquingKeysWith: { first, _ in first })
        #expect(headers["Date"] == "Tue, 01 Jul 2025 09:05:07 +0000")
        #expect(headers["Message-ID"] == "<4f1c2a9e@vicinity.test>")
        #expect(headers["To"] == Self.recipient)
        #expect(headers["MIME-Version"] == "1.0")
        #expect(headers["Content-Type"] == "text/plain; charset=UTF-8")
        #expect(headers["Content-Transfer-Encoding"] == "quoted-printable")
        #expect(headers["Subject"]?.hasPrefix("=?UTF-8?B?") == true)

        // Python's email package, reading independently, gets back what was sent.
        #expect(mail.subject == Self.subject)
        #expect(mail.fromName == "Vicinity ใกล้ฉัน")
        #expect(mail.fromAddress == Self.sender)
        #expect(mail.body == Self.body + "\n")

        // 7-bit and short lines, as every relay carries them (RFC 5322 §2.1.1, RFC 2045 §6.7).
        #expect(mail.raw.utf8.allSatisfy { $0 < 0x80 })
        for line in mail.raw.components(separatedBy: "\r\n") {
            #expect(line.utf8.count <= 78, "\(line)")
        }
        // The relay undid the stuffing: the period lines are back as written.
        #expect(mail.raw.contains("\r\n.hidden line that starts with a period\r\n.\r\n..two periods\r\n"))
    }

    @Test("a message sent again with its recorded id and date carries the same Message-ID and Date")
    func retriedMessageKeepsItsIdentity() async throws {
        let relay = try await TestRelay()
        defer { relay.stop() }
        let first = try message()
        let sender = try client("smtp://127.0.0.1:\(relay.port)")
        try await sender.send(first)
        let again = try message(messageID: MessageID(first.messageID.description), date: first.date)
        try await sender.send(again)

        let received = try relay.received()
        try #require(received.count == 2)
        let identities = received.map { mail in mail.headers.filter { ["Message-ID", "Date"].contains($0.name) }.map(\.value) }
        #expect(identities[0] == identities[1])
        #expect(identities[0].first?.hasSuffix(" +0000") == true)
        #expect(first.messageID.right == "vicinity.test", "a new id is on the sender's domain")
    }

    @Test("STARTTLS and AUTH PLAIN: the message goes encrypted and signed in, the certificate trusted through the CA file, and the log shows the dialogue without the password or the message")
    func startTLSAndPlain() async throws {
        let relay = try await TestRelay(security: .startTLS, authentication: ["PLAIN", "LOGIN"])
        defer { relay.stop() }
        let logs = LogRecorder()
        // `localhost`: the certificate's DNS name is checked and sent by SNI.
        let sender = try client("smtp://\(TestRelay.user)@localhost:\(relay.port)", password: TestRelay.password, trustTestCertificate: true, logs: logs)
        try await sender.send(message())

        let received = try relay.received()
        try #require(received.count == 1)
        #expect(received[0].tls)
        #expect(received[0].mechanism == "PLAIN")
        #expect(received[0].authenticatedAs == TestRelay.user)
        #expect(received[0].body == Self.body + "\n")

        let log = logs.lines.joined(separator: "\n")
        for step in ["C: EHLO", "S: 220", "C: STARTTLS", "TLS established", "C: AUTH PLAIN <credentials withheld>", "S: 235", "C: MAIL FROM:<\(Self.sender)>",
                     "C: RCPT TO:<\(Self.recipient)>", "C: DATA", "S: 354", "C: <message, ", "C: QUIT", "S: 221"] {
            #expect(log.contains(step), "the log has \(step)")
        }
        #expect(logs.lines.allSatisfy { $0.hasPrefix("debug") }, "the dialogue is logged at debug only")
        #expect(log.contains("smtp.relay=smtp://\(TestRelay.user)@localhost:\(relay.port)"))
        #expect(!log.contains(TestRelay.password))
        #expect(!log.contains(Data("\u{0}\(TestRelay.user)\u{0}\(TestRelay.password)".utf8).base64EncodedString()))
        #expect(!log.contains("482913") && !log.contains("Subject"), "neither the body nor the headers are logged")
    }

    @Test("AUTH LOGIN when the relay offers only LOGIN, in the clear only because the relay is this machine")
    func loginOverLoopback() async throws {
        let relay = try await TestRelay(authentication: ["LOGIN"])
        defer { relay.stop() }
        let logs = LogRecorder()
        try await client("smtp://\(TestRelay.user)@127.0.0.1:\(relay.port)", password: TestRelay.password, logs: logs).send(message())

        let received = try relay.received()
        try #require(received.count == 1)
        #expect(received[0].mechanism == "LOGIN")
        #expect(received[0].authenticatedAs == TestRelay.user)
        #expect(!received[0].tls)
        #expect(logs.lines.contains { $0.contains("C: <password withheld>") })
        #expect(!logs.lines.joined().contains(TestRelay.password))
    }

    @Test("smtps:// speaks TLS from the first octet, with the password percent-decoded from the URL")
    func implicitTLS() async throws {
        let relay = try await TestRelay(security: .implicitTLS, authentication: ["PLAIN", "LOGIN"])
        defer { relay.stop() }
        let encoded = TestRelay.password.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
        try await client("smtps://\(TestRelay.user):\(encoded)@127.0.0.1:\(relay.port)", trustTestCertificate: true).send(message())

        let received = try relay.received()
        try #require(received.count == 1)
        #expect(received[0].tls)
        #expect(received[0].authenticatedAs == TestRelay.user)
    }

    @Test("required TLS against a relay without STARTTLS is a configuration error, raised before any credential is sent")
    func requiredTLSNotOffered() async throws {
        let relay = try await TestRelay(authentication: ["PLAIN", "LOGIN"])
        defer { relay.stop() }
        let logs = LogRecorder()
        let sender = try client("smtp://\(TestRelay.user)@127.0.0.1:\(relay.port)", password: TestRelay.password, tls: .required, logs: logs)
        let error = try #require(await failure(sending: message(), with: sender))
        #expect(error.step == .startTLS)
        #expect(error.reason == .startTLSNotOffered)
        #expect(error.disposition == .misconfigured)
        #expect(!logs.lines.contains { $0.contains("C: AUTH") })
        #expect(try relay.received().isEmpty)
    }

    @Test("a relay certificate that is not trusted fails the handshake, transient, and no credential is sent")
    func untrustedCertificate() async throws {
        let relay = try await TestRelay(security: .startTLS, authentication: ["PLAIN"])
        defer { relay.stop() }
        let logs = LogRecorder()
        let sender = try client("smtp://\(TestRelay.user)@localhost:\(relay.port)", password: TestRelay.password, logs: logs)
        let error = try #require(await failure(sending: message(), with: sender))
        #expect(error.step == .tlsHandshake)
        guard case .tlsFailed = error.reason else {
            Issue.record("expected a TLS failure, got \(error)")
            return
        }
        #expect(error.disposition == .transient)
        #expect(!logs.lines.contains { $0.contains("C: AUTH") })
        #expect(try relay.received().isEmpty)
    }

    @Test("a 4xx reply is transient and carries the relay's code and text", arguments: [
        (TestRelay.Mode.temporaryFailureAtRecipient, SMTPStep.recipient),
        (TestRelay.Mode.temporaryFailureAfterData, SMTPStep.message),
    ])
    func temporaryFailure(mode: TestRelay.Mode, step: SMTPStep) async throws {
        let relay = try await TestRelay(mode)
        defer { relay.stop() }
        let error = try #require(await failure(sending: message(), with: client("smtp://127.0.0.1:\(relay.port)")))
        #expect(error.step == step)
        #expect(error.disposition == .transient)
        #expect(error.reply?.code == 451)
        #expect(error.reply?.description.contains("try again later") == true)
        #expect(error.description.contains("451"))
        #expect(try relay.received().isEmpty)
    }

    @Test("a 5xx reply to the recipient or to the message is permanent and carries the relay's code and text", arguments: [
        (TestRelay.Mode.rejectionAtRecipient, SMTPStep.recipient, 550, "unknown user"),
        (TestRelay.Mode.rejectionAfterData, SMTPStep.message, 554, "content rejected"),
    ])
    func permanentFailure(mode: TestRelay.Mode, step: SMTPStep, code: Int, text: String) async throws {
        let relay = try await TestRelay(mode)
        defer { relay.stop() }
        let error = try #require(await failure(sending: message(), with: client("smtp://127.0.0.1:\(relay.port)")))
        #expect(error.step == step)
        #expect(error.disposition == .permanent)
        #expect(error.reply?.code == code)
        #expect(error.description.contains(text))
    }

    @Test("a wrong password is a configuration error at AUTH, not a reason to drop the message")
    func wrongPassword() async throws {
        let relay = try await TestRelay(authentication: ["PLAIN"])
        defer { relay.stop() }
        let sender = try client("smtp://\(TestRelay.user)@127.0.0.1:\(relay.port)", password: "not-the-password")
        let error = try #require(await failure(sending: message(), with: sender))
        #expect(error.step == .authentication)
        #expect(error.reply?.code == 535)
        #expect(error.disposition == .misconfigured)
    }

    @Test("the password is in no error, description or log line, even when the relay repeats it back")
    func passwordNeverShown() async throws {
        let relay = try await TestRelay(.echoingAuthentication, authentication: ["PLAIN"])
        defer { relay.stop() }
        let logs = LogRecorder()
        let url = "smtp://\(TestRelay.user)@127.0.0.1:\(relay.port)"
        let sender = try client(url, password: TestRelay.password, logs: logs)
        let error = try #require(await failure(sending: message(), with: sender))
        #expect(error.step == .authentication)
        #expect(error.reply?.description.contains("<withheld>") == true, "the relay did repeat it: \(String(describing: error.reply))")

        let configuration = try SMTPConfiguration(url: url, password: TestRelay.password)
        var dumped = ""
        dump(configuration, to: &dumped)
        let shown = [
            String(describing: error), String(reflecting: error), "\(error.reason)", configuration.description,
            String(reflecting: configuration), dumped, String(describing: configuration.credentials),
            String(describing: sender.configuration),
        ] + logs.lines
        for text in shown {
            #expect(!text.contains(TestRelay.password), "\(text)")
        }
        #expect(configuration.description == url)
    }

    @Test("a refused connection is transient")
    func connectionRefused() async throws {
        // Port 1 (tcpmux) is not served on any machine these tests run on.
        let error = try #require(await failure(sending: message(), with: client("smtp://127.0.0.1:1")))
        #expect(error.step == .connect)
        guard case .connectionFailed = error.reason else {
            Issue.record("expected a connection failure, got \(error)")
            return
        }
        #expect(error.disposition == .transient)
    }

    @Test("a cancelled send ends at once rather than at its timeout, transient")
    func cancelledSend() async throws {
        let relay = try await TestRelay(.silent)
        defer { relay.stop() }
        var configuration = try SMTPConfiguration(url: "smtp://127.0.0.1:\(relay.port)")
        configuration.replyTimeout = .seconds(60)
        let sender = try SMTPClient(configuration: configuration)
        let sent = try message()
        let sending = Task { try await sender.send(sent) }
        // Cancelled once the relay holds the connection: the send is then waiting for a greeting that never comes.
        try await relay.acceptedConnection()
        let start = ContinuousClock.now
        sending.cancel()
        let outcome = await sending.result
        let elapsed = ContinuousClock.now - start
        guard case .failure(let failure) = outcome, let error = failure as? SMTPError else {
            Issue.record("a cancelled send to a silent relay ended with \(outcome)")
            return
        }
        #expect(error.disposition == .transient)
        #expect(elapsed < .seconds(30), "well before the 60 s reply timeout")
    }

    @Test("a relay that never answers times out within the configured time, transient")
    func silentRelay() async throws {
        let relay = try await TestRelay(.silent)
        defer { relay.stop() }
        var configuration = try SMTPConfiguration(url: "smtp://127.0.0.1:\(relay.port)")
        configuration.replyTimeout = .seconds(1)
        let sender = try SMTPClient(configuration: configuration)
        let start = ContinuousClock.now
        let error = try #require(await failure(sending: message(), with: sender))
        let elapsed = ContinuousClock.now - start
        #expect(error.step == .greeting)
        #expect(error.reason == .timedOut)
        #expect(error.disposition == .transient)
        #expect(elapsed >= .milliseconds(900), "it waited the reply timeout")
        // Generous: a busy machine may be slow to schedule the timer, but never by this much.
        #expect(elapsed < .seconds(30))
    }
}
