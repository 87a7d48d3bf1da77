import ArgumentParser

@main
struct Vicinity: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "vicinity",
        abstract: "Answers \"what is near me?\" over an embedded SpatiaLite database or PostgreSQL with PostGIS.",
        subcommands: [Serve.self, Import.self, Nearby.self, Closest.self, Copy.self, Backup.self, Restore.self, Users.self, Push.self]
    )
}
