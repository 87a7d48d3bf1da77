"""Accounts on the map page in a real browser, against a server that mails through a real SMTP relay on loopback
(VICINITY_BROWSER_MAIL_DIR is the relay's folder, where the tests read the codes the server mailed).
Scripts/check/browser.sh starts both and runs these with the map page's tests:

    VICINITY_BROWSER_URL=http://127.0.0.1:18085 VICINITY_BROWSER_MAIL_DIR=/tmp/.../mail \\
        /usr/bin/python3 -m unittest discover -s Tests/Browser -p 'test_accounts.py' -v

Sign-up with an address and the code step, signing in by e-mail, with a code alone and after a forgotten
password, changing the address, downloading one's data and deleting the account, each as a student does it.
Their browser sessions are checked for CSP violations and script errors by the last test of test_map_page.py,
which runs after these (discover takes the files in the order of their names).
"""

import json
import pathlib
import shutil
import tempfile
import unittest

from selenium.webdriver.common.keys import Keys

from vicinity_browser import (MAIL_DIR, MAIL_DOMAIN, RUN, Account, ApiError, Browser, api, code_mailed, mail_count,
                              mailed, require_server)

CODE_ON_ITS_WAY = "If an account has {} as its confirmed address, a code is on its way to it."


def setUpModule():
    require_server()
    if not MAIL_DIR:
        raise unittest.SkipTest("no mail relay's folder (VICINITY_BROWSER_MAIL_DIR): accounts need a server that mails")


def refused(method, path, token=None, body=None):
    """The HTTP status the server refuses the request with; None when it does not refuse it."""
    try:
        api(method, path, token, body)
    except ApiError as error:
        return error.status
    return None


def other_code(code):
    """A code that is not `code`."""
    return f"{(int(code) + 1) % 1_000_000:06d}"


class AccountsTest(unittest.TestCase):
    maxDiff = None

    def browser(self, width=1280, height=800, mobile=False, downloads=None):
        browser = Browser(self, width, height, mobile, downloads)
        self.addCleanup(browser.close)
        return browser

    def focused(self, browser):
        return browser.js("return document.activeElement && document.activeElement.id")

    def error_next_to(self, browser, control_id):
        """The error shown for the control: the slot its aria-describedby names, after checking it is marked
        invalid and that the slot is a live region."""
        control = browser.find(f"#{control_id}")
        slot = f"#{control_id}-error"
        browser.wait(lambda driver: browser.text(slot) != "" and control.get_attribute("aria-invalid") == "true",
                     lambda: f"an error shows next to #{control_id} (it says {browser.text_of(slot)!r}; "
                             f"#message {browser.message()!r})")
        self.assertIn(f"{control_id}-error", (control.get_attribute("aria-describedby") or "").split())
        self.assertEqual(browser.find(slot).get_attribute("role"), "alert")
        self.assertTrue(browser.find(slot).is_displayed())
        return browser.text(slot)

    def sign_out(self, browser):
        browser.tab("account")
        browser.click("#signout")
        browser.visible("#signin-form", "the sign-in form shows once signed out")
        self.assertIsNone(browser.js("return sessionStorage.getItem('vicinity.token')"))

    def request_code(self, browser, email):
        """Asks for a sign-in code in the code section (already open) and waits for the page to say it is on its
        way; returns the mails the address had before."""
        before = mail_count(email)
        browser.fill("#code-email", email)
        browser.submit("#code-request-form")
        browser.wait(lambda driver: CODE_ON_ITS_WAY.format(email) in browser.text("#code-sent"),
                     lambda: f"#code-sent says a code is on its way (it says {browser.text_of('#code-sent')!r}; "
                             f"#code-request-form-error {browser.text_of('#code-request-form-error')!r})")
        return before

    def test_a_student_signs_up_with_her_e_mail_confirms_the_mailed_code_and_signs_in_again_by_e_mail(self):
        student = Account("Nok", "Srisuk", "nok")
        page = self.browser()
        page.open("/")
        before = page.sign_up(student, confirm=False)

        # Signed in at once, with the code step asking for the code mailed to the address given.
        page.visible("#email-confirm-form", "the code step shows after signing up with an address")
        self.assertIn(f"We mailed a code to {student.email}", page.text("#email-pending"))
        self.assertEqual(self.focused(page), "email-code", "the keyboard is in the code field")
        self.assertIn("No confirmed address yet", page.text("#email-current"))
        message = mailed(student.email, before)
        self.assertEqual(message["from_address"], "vicinity@example.edu")
        self.assertIn("confirms that", message["body"])
        self.assertEqual(api("GET", "/v1/me", self.sign_in_through_api(student))["pending_email"], student.email)

        page.confirm_email(student.email, before)
        self.assertIn("confirmed", page.text("#email-current"))
        self.assertIn(f"{student.email} is confirmed", page.message())
        me = api("GET", "/v1/me", self.sign_in_through_api(student))
        self.assertEqual((me["email"], me["email_verified"], me["pending_email"]), (student.email, True, None))

        self.sign_out(page)
        page.sign_in(student, login=student.email)
        self.assertIn(f"@{student.username}", page.text("#whoami"))
        page.assert_not_reloaded()

    def test_a_student_who_forgot_her_password_signs_in_with_a_code_and_sets_a_new_one_without_the_old(self):
        student = Account("Pim", "Chaiyo", "pim").sign_up_through_api()
        old_token = student.token
        new_password = f"new password {RUN} for Pim"
        page = self.browser()
        page.open("/")
        page.tab("account")
        page.click("#forgot-password")
        page.visible("#code-section", "'Forgot password?' opens the code sign-in")
        self.assertEqual(page.text("#code-heading"), "Forgot your password?")
        self.assertFalse(page.find("#signin-form").is_displayed(), "the password form steps aside")
        self.assertEqual(self.focused(page), "code-email")

        before = self.request_code(page, student.email)
        self.assertEqual(self.focused(page), "code-code")
        page.fill("#code-code", code_mailed(student.email, before))
        page.submit("#code-signin-form")
        page.wait_signed_in(student)

        # Asked for a new password at once, without the current one.
        page.wait(lambda driver: self.focused(page) == "password-new", "the keyboard is in the new password field")
        self.assertFalse(page.find("#password-current").is_displayed(), "no current password is asked for")
        self.assertIn("You signed in with a code", page.text("#password-passwordless"))
        page.fill("#password-new", new_password)
        page.submit("#password-form")
        page.wait(lambda driver: "Your password is changed" in page.message(),
                  lambda: f"the page says the password is changed (#message {page.message()!r}, "
                          f"#password-form-error {page.text_of('#password-form-error')!r})")
        self.assertEqual(refused("GET", "/v1/me", old_token), 401, "another session of hers still works")

        # The old password no longer signs in, and says so next to the form; the new one does.
        self.sign_out(page)
        page.fill("#signin-login", student.username)
        page.fill("#signin-password", student.password)
        page.submit("#signin-form")
        page.wait(lambda driver: "password is wrong" in page.text("#signin-form-error"),
                  lambda: f"the sign-in form says the password is wrong (it says {page.text_of('#signin-form-error')!r})")
        self.assertFalse(page.find("#whoami").is_displayed(), "signed in with the old password")
        page.sign_in(student, login=student.email, password=new_password)
        page.assert_not_reloaded()

    def test_a_student_signs_in_with_a_code_alone_from_the_keyboard(self):
        student = Account("Ana", "Lima", "ana").sign_up_through_api()
        page = self.browser()
        page.open("/")
        page.tab("account")
        page.click("#signin-login")
        keys = page.driver.switch_to.active_element
        # Username or e-mail, password, Sign in, then "Sign in with a code instead".
        keys.send_keys(Keys.TAB, Keys.TAB, Keys.TAB)
        self.assertEqual(self.focused(page), "signin-by-code")
        page.driver.switch_to.active_element.send_keys(Keys.ENTER)
        page.visible("#code-section", "Enter on 'Sign in with a code instead' opens the code sign-in")
        self.assertEqual(page.text("#code-heading"), "Sign in with a code")
        self.assertEqual(self.focused(page), "code-email")

        # An address nobody has is answered in the same words as hers.
        nobody = f"nobody-{RUN}@{MAIL_DOMAIN}"
        page.driver.switch_to.active_element.send_keys(nobody, Keys.ENTER)
        page.wait(lambda driver: CODE_ON_ITS_WAY.format(nobody) in page.text("#code-sent"),
                  lambda: f"#code-sent answers for an unknown address (it says {page.text_of('#code-sent')!r})")
        unknown_answer = page.text("#code-sent")

        before = mail_count(student.email)
        page.fill("#code-email", student.email)
        page.find("#code-email").send_keys(Keys.ENTER)
        page.wait(lambda driver: CODE_ON_ITS_WAY.format(student.email) in page.text("#code-sent"), "#code-sent answers for hers")
        self.assertEqual(page.text("#code-sent").replace(student.email, "ADDRESS"), unknown_answer.replace(nobody, "ADDRESS"))
        self.assertEqual(self.focused(page), "code-code")
        page.driver.switch_to.active_element.send_keys(code_mailed(student.email, before), Keys.ENTER)
        page.wait_signed_in(student)
        self.assertIn("Signed in with a code", page.message())
        self.assertTrue(page.js("return sessionStorage.getItem('vicinity.token') !== null"))
        page.assert_not_reloaded()

    def test_a_student_changes_her_e_mail_and_the_old_one_stays_until_the_new_code_is_confirmed(self):
        student = Account("Mai", "Tran", "mai").sign_up_through_api()
        old_email, new_email = student.email, f"mai.tran-{RUN}@{MAIL_DOMAIN}"
        page = self.browser()
        page.open("/")
        page.sign_in(student)
        self.assertEqual(page.text("#email-current .email-address"), old_email)
        self.assertFalse(page.find("#email-confirm-form").is_displayed(), "a confirmed address asks for no code")

        before = mail_count(new_email)
        page.fill("#email-new", new_email)
        page.submit("#email-change-form")
        page.visible("#email-confirm-form", "the code step shows for the new address")
        pending = page.text("#email-pending")
        self.assertIn(f"We mailed a code to {new_email}", pending)
        self.assertIn(f"until then {old_email} stays your address", pending)
        self.assertEqual(page.text("#email-current .email-address"), old_email, "the old address is still shown as hers")
        self.assertEqual(self.focused(page), "email-code")

        # Until the code is typed, the old address is hers and signs in; the new one does not.
        me = api("GET", "/v1/me", student.token)
        self.assertEqual((me["email"], me["pending_email"]), (old_email, new_email))
        self.assertEqual(refused("POST", "/v1/sessions", body={"email": new_email, "password": student.password}), 401)
        self.sign_in_through_api(student, email=old_email)

        page.confirm_email(new_email, before)
        me = api("GET", "/v1/me", student.token)
        self.assertEqual((me["email"], me["email_verified"], me["pending_email"]), (new_email, True, None))
        self.sign_in_through_api(student, email=new_email)
        self.assertEqual(refused("POST", "/v1/sessions", body={"email": old_email, "password": student.password}), 401)
        page.assert_not_reloaded()

    def test_a_student_downloads_her_data_as_a_json_file_holding_her_account(self):
        student = Account("Kanya", "Boonmee", "kanya").sign_up_through_api()
        downloads = pathlib.Path(tempfile.mkdtemp(prefix="vicinity-downloads-"))
        self.addCleanup(shutil.rmtree, downloads, ignore_errors=True)
        page = self.browser(downloads=downloads)
        page.open("/")
        page.sign_in(student)
        page.click("#export-data")
        saved = downloads / "vicinity-export.json"
        page.wait(lambda driver: saved.exists() and not list(downloads.glob("*.crdownload")),
                  lambda: f"{saved} is downloaded (the folder holds {sorted(path.name for path in downloads.iterdir())}; "
                          f"#message {page.message()!r}, #export-form-error {page.text_of('#export-form-error')!r})")
        exported = json.loads(saved.read_text(encoding="utf-8"))
        account = exported["account"]
        self.assertEqual((account["username"], account["email"], account["first_name"], account["last_name"]),
                         (student.username, student.email, "Kanya", "Boonmee"))
        for member in ("exported_at", "position", "friends", "friend_requests", "votes_started", "ballots", "events"):
            self.assertIn(member, exported)
        self.assertIn("vicinity-export.json", page.message())
        self.assertEqual([path.name for path in downloads.iterdir()], ["vicinity-export.json"], "one file, once")

    def test_a_student_deletes_her_account_after_confirming_and_can_no_longer_sign_in(self):
        student = Account("Lek", "Wongsa", "lek").sign_up_through_api()
        page = self.browser()
        page.open("/")
        page.sign_in(student)

        # The first press asks, naming her and what goes; "Keep my account" keeps it.
        page.click("#delete-account")
        page.visible("#delete-form", "deleting asks to confirm")
        self.assertEqual(page.find("#delete-account").get_attribute("aria-expanded"), "true")
        question = page.text("#delete-form")
        self.assertIn(f"@{student.username}", question)
        for what in ("shared position", "friends", "votes you opened", "cannot be undone"):
            self.assertIn(what, question)
        self.assertEqual(self.focused(page), "delete-password")
        page.click("#delete-no")
        page.wait(lambda driver: not page.find("#delete-form").is_displayed(), "'Keep my account' puts the question away")
        self.assertEqual(self.focused(page), "delete-account")
        self.assertEqual(api("GET", "/v1/me", student.token)["username"], student.username)

        # A wrong password is refused next to the password field; the right one deletes.
        page.click("#delete-account")
        page.fill("#delete-password", "not the password at all")
        page.click("#delete-yes")
        self.assertIn("password is wrong", self.error_next_to(page, "delete-password"))
        self.assertEqual(api("GET", "/v1/me", student.token)["username"], student.username, "deleted by a wrong password")
        page.fill("#delete-password", student.password)
        page.click("#delete-yes")
        page.wait(lambda driver: "Your account is deleted" in page.message(),
                  lambda: f"the page says the account is deleted (#message {page.message()!r}, "
                          f"#delete-form-error {page.text_of('#delete-form-error')!r})")
        self.assert_signed_out(page)
        self.assert_gone(student)

    def test_right_after_a_code_sign_in_a_student_deletes_her_account_without_her_password(self):
        student = Account("Dao", "Rattana", "dao").sign_up_through_api()
        page = self.browser()
        page.open("/")
        page.tab("account")
        page.click("#signin-by-code")
        before = self.request_code(page, student.email)
        page.fill("#code-code", code_mailed(student.email, before))
        page.submit("#code-signin-form")
        page.wait_signed_in(student)

        page.click("#delete-account")
        page.visible("#delete-form", "deleting asks to confirm")
        self.assertFalse(page.find("#delete-password").is_displayed(), "a password is asked for right after a code sign-in")
        self.assertIn("You signed in with a code", page.text("#delete-passwordless"))
        self.assertEqual(self.focused(page), "delete-yes")
        page.click("#delete-yes")
        page.wait(lambda driver: "Your account is deleted" in page.message(),
                  lambda: f"the page says the account is deleted (#message {page.message()!r}, "
                          f"#delete-form-error {page.text_of('#delete-form-error')!r})")
        self.assert_signed_out(page)
        self.assert_gone(student)

    def test_a_wrong_code_shows_its_error_next_to_the_code_field(self):
        student = Account("Ploy", "Sukjai", "ploy")
        page = self.browser()
        page.open("/")
        before = page.sign_up(student, confirm=False)
        code = code_mailed(student.email, before)

        # Not six digits: said at once, without asking the server.
        page.fill("#email-code", "12ab")
        page.submit("#email-confirm-form")
        self.assertIn("6 digits", self.error_next_to(page, "email-code"))
        # Six digits, but not the code.
        page.fill("#email-code", other_code(code))
        self.assertEqual(page.find("#email-code").get_attribute("aria-invalid"), None, "typing again clears the mark")
        page.submit("#email-confirm-form")
        self.assertIn("This code is wrong", self.error_next_to(page, "email-code"))
        self.assertEqual(self.focused(page), "email-code")
        self.assertEqual(page.message(), "", "the error is next to the field, not in the message line")
        self.assertIsNone(api("GET", "/v1/me", self.sign_in_through_api(student))["email"], "a wrong code confirmed")

        # The right one still works (a wrong try spends one of its five), and clears the error.
        page.fill("#email-code", code)
        page.submit("#email-confirm-form")
        page.wait(lambda driver: page.text("#email-current .email-address") == student.email,
                  lambda: f"the address is confirmed (#email-code-error {page.text_of('#email-code-error')!r})")
        self.assertEqual(page.text("#email-code-error"), "")

        # The same at signing in with a code.
        self.sign_out(page)
        page.click("#signin-by-code")
        before = self.request_code(page, student.email)
        code = code_mailed(student.email, before)
        page.fill("#code-code", other_code(code))
        page.submit("#code-signin-form")
        self.assertIn("This code is wrong", self.error_next_to(page, "code-code"))
        self.assertFalse(page.find("#whoami").is_displayed(), "signed in with a wrong code")
        page.fill("#code-code", code)
        page.submit("#code-signin-form")
        page.wait_signed_in(student)

    def test_sign_up_mistakes_show_next_to_each_field_in_the_forms_own_words(self):
        page = self.browser()
        page.open("/")
        page.tab("account")
        page.fill("#signup-username", "x")
        page.fill("#signup-email", "not an address")
        page.fill("#signup-password", "short")
        page.submit("#signup-form")
        said = {control: self.error_next_to(page, control) for control in
                ("signup-username", "signup-email", "signup-password", "signup-first-name", "signup-last-name")}
        self.assertEqual(said["signup-username"], "Username must be 3 to 32 characters")
        self.assertTrue(said["signup-email"].startswith("E-mail must be an e-mail address"), said["signup-email"])
        self.assertEqual(said["signup-password"], "Password must be at least 8 characters")
        self.assertEqual(said["signup-first-name"], "First name must not be empty")
        self.assertEqual(said["signup-last-name"], "Last name must not be empty")
        self.assertNotIn("first_name", page.text("#panel-account"), "a field's wire name shows on the page")
        self.assertEqual(self.focused(page), "signup-username", "the keyboard goes to the first mistake")

        # Without an address, the server (with a relay, by default) asks for one: said next to the field.
        student = Account("Nin", "Chai", "nin")
        page.fill("#signup-username", student.username)
        page.find("#signup-email").clear()
        page.fill("#signup-password", student.password)
        page.fill("#signup-first-name", student.first_name)
        page.fill("#signup-last-name", student.last_name)
        page.submit("#signup-form")
        self.assertTrue(self.error_next_to(page, "signup-email").startswith("E-mail is required"))
        for control in ("signup-username", "signup-password", "signup-first-name", "signup-last-name"):
            self.assertEqual(page.text(f"#{control}-error"), "", f"#{control} still shows an error")
        self.assertFalse(page.find("#whoami").is_displayed(), "signed up without an address")

    def test_the_account_steps_fit_a_375_px_phone(self):
        student = Account("Fah", "Siri", "fah")
        phone = self.browser(375, 812, mobile=True)
        phone.open("/")
        before = phone.sign_up(student, confirm=False)
        phone.visible("#email-confirm-form", "the code step shows on the phone")
        self.assert_fits(phone, "the code step")
        phone.confirm_email(student.email, before)
        phone.click("#delete-account")
        phone.visible("#delete-form", "deleting asks to confirm on the phone")
        self.assert_fits(phone, "the delete confirmation")
        phone.click("#delete-no")
        self.sign_out(phone)
        phone.click("#forgot-password")
        phone.visible("#code-section", "the code sign-in opens on the phone")
        self.assert_fits(phone, "the code sign-in")

    # Helpers

    def sign_in_through_api(self, account, email=None):
        """A new session of `account` (by username, or by `email`), its token."""
        body = {"email": email, "password": account.password} if email else {"username": account.username,
                                                                             "password": account.password}
        return api("POST", "/v1/sessions", body=body)["token"]

    def assert_signed_out(self, page):
        page.visible("#signin-form", "the page is signed out")
        self.assertFalse(page.find("#whoami").is_displayed())
        self.assertIsNone(page.js("return sessionStorage.getItem('vicinity.token')"), "the token is still kept")

    def assert_gone(self, account):
        self.assertEqual(refused("GET", "/v1/me", account.token), 401, "her earlier session still works")
        self.assertEqual(refused("POST", "/v1/sessions", body={"username": account.username, "password": account.password}),
                         401, "she still signs in by username")
        self.assertEqual(refused("POST", "/v1/sessions", body={"email": account.email, "password": account.password}),
                         401, "she still signs in by e-mail")

    def assert_fits(self, phone, where):
        width = phone.js("return document.documentElement.scrollWidth")
        self.assertLessEqual(width, 375, f"{where}: the page scrolls sideways ({width} px wide)")
        for element in phone.find_all("#panel-account input, #panel-account button"):
            if element.is_displayed():
                box = phone.js("const box = arguments[0].getBoundingClientRect(); return [box.left, box.right]", element)
                self.assertGreaterEqual(box[0], 0, f"{where}: #{element.get_attribute('id')} starts off the screen")
                self.assertLessEqual(box[1], 375, f"{where}: #{element.get_attribute('id')} ends off the screen")


if __name__ == "__main__":
    unittest.main()
