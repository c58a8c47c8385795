import ArgumentParser
import SmartStackClient
import SmartStackProtocol

/// Any method, with its parameters as JSON: the escape hatch that covers every method of the interfaces.
struct Call: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Call any method with JSON parameters and print the reply as JSON.",
        discussion: """
            Example: smartstackctl call io.smartstack.Shell.GetStack '{"stack": "home"}'
            Streaming methods (Subscribe, WatchReloads) need --more; --count stops after that many replies.
            """)
    @OptionGroup var global: GlobalOptions
    @Argument(help: "The fully qualified method, such as io.smartstack.Shell.GetStack.") var method: String
    @Argument(help: "The parameters as a JSON object.") var parameters: String = "{}"
    @Flag(help: "Call a streaming method and print each reply.") var more = false
    @Option(help: "With --more: stop after this many replies.") var count: Int?

    func run() async throws {
        let value: JSONValue
        do { value = try JSON.parse(Array(parameters.utf8)) } catch {
            throw ValidationError("parameters are not JSON: \(error)")
        }
        guard case .object(let object) = value else { throw ValidationError("parameters must be a JSON object") }
        let global = self.global
        do {
            if more {
                let seen = Counter()
                let limit = count
                try await global.stream(method, object) { reply in
                    global.printJSON(reply)
                    return limit.map { seen.increment() < $0 } ?? true
                }
            } else {
                global.printJSON(try await global.call(method, object))
            }
        } catch let error as VarlinkClientError {
            if case .remote(let remote) = error {
                var object: JSONObject = ["error": .string(remote.name)]
                if remote.parameters.count > 0 { object["parameters"] = .object(remote.parameters) }
                StandardErrorStream.print(String(decoding: JSON.serialize(.object(object)), as: UTF8.self))
                throw ExitCode(2)
            }
            throw error
        }
    }
}
