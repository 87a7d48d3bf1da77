/// What the service's mails say: plain text, the code first, what it is for and how long it works, and what
/// to do about a mail nobody asked for.
enum MailTexts {
    static func code(_ code: MailCode, purpose: CodePurpose, to email: Email, rules: CodeRules) -> Mail {
        let minutes = Int(rules.lifetime.components.seconds / 60)
        let what: String
        let subject: String
        switch purpose {
        case .verifyEmail:
            subject = "Your Vicinity code: \(code.text)"
            what = "This code confirms that \(email.rawValue) is your address for your Vicinity account."
        case .signIn:
            subject = "Your Vicinity sign-in code: \(code.text)"
            what = "This code signs you in to Vicinity without your password. After signing in with it you may set a new password."
        }
        let body = """
            \(code.text)

            \(what)

            It works for \(minutes) minutes and for \(rules.tries) tries, and only the newest code you asked for works.

            If you did not ask for it, you can ignore this mail: nothing changes without the code.
            """
        return Mail(to: email, subject: subject, body: body)
    }
}
