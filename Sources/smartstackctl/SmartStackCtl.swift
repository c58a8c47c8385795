// smartstackctl — talks to smartstackd over its Varlink socket: status, stacks, orders, streams,
// donations and timelines, as tables for people or JSON (--json) for scripts.

import ArgumentParser
import SmartStackClient
import SmartStackProtocol

@main
struct SmartStackCtl: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "smartstackctl",
        abstract: "Talk to smartstackd: stacks, orders, subscriptions, donations, timelines.",
        subcommands: [Status.self, Stacks.self, StackCommand.self, Watch.self, Donate.self, TimelineCommand.self])
}

/// Options every command takes.
struct GlobalOptions: ParsableArguments {
    @Option(name: .long, help: "The service's address, unix:PATH (default: the user's or the system's socket).")
    var address: String?

    @Flag(name: .long, help: "Print the replies as JSON, one object per line.")
    var json = false

    /// The socket path to connect to.
    func socketPath() throws -> String {
        guard let address else { return ServiceDefaults(environment: processEnvironment(), uid: currentUID()).socketPath }
        guard address.hasPrefix("unix:") else {
            throw ValidationError("--address must look like unix:PATH, got '\(address)'")
        }
        return String(address.dropFirst(5))
    }

    /// Makes one call on a fresh connection.
    func call(_ method: String, _ parameters: JSONObject = JSONObject()) async throws -> JSONObject {
        try await VarlinkClient.withConnection(path: try socketPath()) { client in
            try await client.call(method, parameters)
        }
    }

    /// Runs a stream on a fresh connection until `body` returns `false` or the stream ends.
    func stream(_ method: String, _ parameters: JSONObject, _ body: (JSONObject) async throws -> Bool) async throws {
        try await VarlinkClient.withConnection(path: try socketPath()) { client in
            try await client.stream(method, parameters, body)
        }
    }

    /// Prints a reply as one JSON line.
    func printJSON(_ object: JSONObject) {
        print(String(decoding: JSON.serialize(.object(object)), as: UTF8.self))
    }
}
