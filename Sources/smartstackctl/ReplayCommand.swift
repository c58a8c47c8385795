import ArgumentParser
import SmartStackCtlKit
import SmartStackEval
import SmartStackProtocol

#if canImport(Glibc)
    import Glibc
#endif

struct Replay: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Feed a usage log (smartstack-usage/1) into the running service, at full speed.",
        discussion: """
            Each user of the log gets a stack (id: the user's name) of the K apps they opened most, one widget \
            kind 'main' per app under the app id USER.APP. Every 'open' row becomes a Donate and every 'home' \
            row a RecordLook, with the row's own time as their date, as smartstack-eval drives the engine. \
            Calls are pipelined over one connection. With --evaluate each home moment also asks for the order \
            at its time (GetStack at) and the hit@1, hit@3 and MRR of the service's answers are printed. A \
            progress bar is drawn on standard error when it is a terminal.
            """)
    @OptionGroup var global: GlobalOptions
    @Argument(help: "The usage log (TSV, docs/usage-log.md).") var file: String
    @Option(name: .customLong("stack-size"), help: "K: apps in each user's stack.") var stackSize = 10
    @Option(help: "The family of every stack.") var family = "systemMedium"
    @Option(help: "Put this before each user's name to make the stack id.") var stackPrefix = ""
    @Flag(help: "Query each home moment's order and score it (hit@1, hit@3, MRR).") var evaluate = false
    @Option(help: "Calls written ahead of their replies, per batch.") var window = 256
    @Flag(help: "Never draw the progress bar.") var noProgress = false

    func validate() throws {
        guard (1...1_000).contains(stackSize) else { throw ValidationError("--stack-size must be 1 to 1000") }
        guard (1...65_536).contains(window) else { throw ValidationError("--window must be 1 to 65536") }
    }

    func run() async throws {
        let log = try Self.load(file)
        var options = ReplayPlan.Options()
        options.stackSize = stackSize
        options.family = family
        options.stackPrefix = stackPrefix
        options.evaluate = evaluate
        let plan = ReplayPlan(log: log, options: options)
        let path = try global.socketPath()
        let showProgress = !noProgress && Terminal.current().errorIsTerminal
        let bar = ProgressBar(label: "replay")
        let outcome: ReplayOutcome
        do {
            outcome = try await ReplayRunner.run(plan, path: path, window: window) { done, total in
                if showProgress { bar.update(done, total) }
            }
        } catch {
            if showProgress { bar.finish() }
            throw error
        }
        if showProgress { bar.finish() }
        var document = outcome.jsonObject
        document["stacks"] = .array(
            plan.users.map {
                .object([
                    "user": .string($0.user), "stack": .string($0.stack),
                    "widgets": .array($0.widgets.map(JSONValue.string)),
                ])
            })
        global.emit(document) { outcome.render(style: global.style) }
        if outcome.errorCount > 0 { throw ExitCode(ExitStatus.serviceError.rawValue) }
    }

    /// Reads and parses the log; a missing file is `noInput`, a malformed one `badInput`.
    static func load(_ path: String) throws -> UsageLog {
        guard let handle = fopen(path, "rb") else {
            throw CtlFailure.noInput("cannot open \(path): \(String(cString: strerror(errno)))")
        }
        defer { fclose(handle) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = chunk.withUnsafeMutableBytes { fread($0.baseAddress, 1, $0.count, handle) }
            if count > 0 { bytes += chunk[0..<count] }
            if count < chunk.count { break }
        }
        do { return try UsageLog.parse(bytes, file: path) } catch { throw CtlFailure.badInput(error.description) }
    }
}
