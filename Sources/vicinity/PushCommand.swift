import ArgumentParser
import Foundation
import VicinityTransports

/// `vicinity push keygen`: the key that signs Web Push (VAPID), made here so that it never passes through
/// anything else.
struct Push: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Make the keys push notifications are sent with.",
        subcommands: [Keygen.self]
    )

    struct Keygen: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Make a VAPID key for Web Push: a P-256 private key in PEM, for serve --vapid-key.",
            discussion: """
                Writes the private key to FILE, readable by its owner only, and prints the public key, which the \
                page's browsers subscribe with (GET /v1/push/vapid-public-key gives it too). Keep the file: with a \
                new key, every browser's subscription stops working until it subscribes again.
                """
        )

        @Argument(help: "Where to write the private key; refused if it exists.")
        var file: String

        func run() async throws {
            let key = VAPIDKey.generate()
            // Created with its final mode, and never over an existing key: losing one unsubscribes every browser.
            let descriptor = open(file, O_WRONLY | O_CREAT | O_EXCL, 0o600)
            guard descriptor >= 0 else {
                Console.error("vicinity: cannot create \(file): \(String(cString: strerror(errno)))")
                throw ExitCode.failure
            }
            let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
            try handle.write(contentsOf: Data(key.pemRepresentation.utf8))
            try handle.close()
            print("VAPID key written to \(file)")
            print("public key (applicationServerKey): \(key.publicKeyBase64URL)")
        }
    }
}
