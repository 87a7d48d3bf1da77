import GeoCore
import VicinityCore
import VicinityBcrypt

/// bcrypt at its minimum cost: these tests check the rules around hashing, not the hash's strength.
let hasher = BcryptHasher(cost: .forTesting(4))

/// Positions on the CSULB campus, from Data/csulb-buildings.csv.
enum Spot {
    static let hallOfScience = point(33.779842, -118.112526)
    static let library = point(33.777267, -118.114777)
    static let studentUnion = point(33.781700, -118.114632)
    static let pyramid = point(33.787445, -118.114403)
    /// Wat Pho, Bangkok, from Data/bangkok-temples.csv.
    static let watPho = point(13.746549, 100.492766)

    static func point(_ latitude: Double, _ longitude: Double) -> Coordinate {
        do { return try Coordinate(latitude: latitude, longitude: longitude) } catch { preconditionFailure("\(error)") }
    }
}
