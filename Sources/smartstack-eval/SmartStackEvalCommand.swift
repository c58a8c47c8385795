// smartstack-eval: replays smartstack-usage/1 logs (docs/usage-log.md) through the engine and the
// baselines and prints their home-moment scores, as a table or as one JSON object on stdout.
import ArgumentParser
import Foundation
import SmartStackEval

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

@main
struct SmartStackEvalCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "smartstack-eval",
        abstract: "Score the engine and the baselines on usage logs (docs/usage-log.md).",
        discussion: """
            Every file is parsed before anything runs; a malformed line is reported as FILE:LINE and \
            nothing is printed on stdout. Users of different files are different users.
            """
    )

    @Option(name: .customLong("stack-size"), help: "Apps in each user's stack (K, at least 1).")
    var stackSize = 10

    @Flag(help: "Print one JSON object instead of a table.")
    var json = false

    @Flag(
        name: .customLong("per-user"),
        help: "Also score every user alone: a table of hit@1 / MRR per person (with --json, a \"users\" key).")
    var perUser = false

    @Option(
        name: .customLong("fit-prior"),
        help: ArgumentHelp(
            "Fit the engine's prior on everyone in the files and write it as Swift source to this path.",
            valueName: "swift-file"))
    var fitPrior: String?

    @Flag(
        name: .customLong("cross-fit"),
        help: "Score every person under a prior fitted on everyone else (leave one person out).")
    var crossFit = false

    @Flag(
        name: .customLong("top-shares"),
        help: "Print each person's share of time on top per app from the engine's own decisions, as JSON.")
    var topShares = false

    @Argument(help: ArgumentHelp("smartstack-usage/1 log files.", valueName: "file"))
    var files: [String]

    func validate() throws {
        guard stackSize >= 1 else { throw ValidationError("--stack-size must be at least 1") }
        guard !files.isEmpty else { throw ValidationError("at least one log file is required") }
    }

    func run() throws {
        var logs: [UsageLog] = []
        for file in files {
            guard let data = FileManager.default.contents(atPath: file) else {
                fail("\(file): cannot read the file")
            }
            do {
                logs.append(try UsageLog.parse(data, file: file))
            } catch {
                fail(error.description)
            }
        }

        let options = EvaluationOptions(stackSize: stackSize)
        if topShares {
            var object: [String: [String: Double]] = [:]
            for (user, shares) in TopShares.run(logs: logs, options: options) { object[user] = shares }
            guard let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]) else {
                fail("cannot encode the shares")
            }
            print(String(decoding: data, as: UTF8.self))
            return
        }
        if let fitPrior {
            let names = files.map { $0.split(separator: "/").last.map(String.init) ?? $0 }
            let id = "fit-\(PriorFit.version) " + names.joined(separator: "+")
            let prior = PriorFit.fit(PriorFit.people(of: logs), id: id, options: options)
            let source = PriorFit.source(of: prior, fittedOn: names.joined(separator: ", "))
            guard FileManager.default.createFile(atPath: fitPrior, contents: Data(source.utf8)) else {
                fail("\(fitPrior): cannot write the prior")
            }
            printError("smartstack-eval: wrote prior '\(id)' to \(fitPrior)")
            return
        }
        if crossFit {
            let result = PriorFit.crossFit(PriorFit.people(of: logs), options: options)
            if json {
                print(Report.json(result, perUser: true), terminator: "")
            } else {
                print(Report.table(result) + "\n" + Report.perUser(result), terminator: "")
            }
            return
        }

        // Progress is for a person watching: always on a terminal, and without --json otherwise too.
        let showProgress = isatty(STDERR_FILENO) != 0 || !json
        var lastTenth = 0
        let progress: ((Int, Int) -> Void)? =
            showProgress
            ? { done, total in
                let tenth = total > 0 ? done * 10 / total : 10
                guard tenth > lastTenth, done < total else { return }
                lastTenth = tenth
                printError("smartstack-eval: replayed \(done) of \(total) rows (\(tenth * 10)%)")
            } : nil

        let result = Evaluation.run(
            logs: logs, options: options,
            rankers: [EngineRanker.factory] + Baselines.baselines, progress: progress)
        if json {
            print(Report.json(result, perUser: perUser), terminator: "")
        } else {
            print(Report.table(result), terminator: "")
            if perUser { print("\n" + Report.perUser(result), terminator: "") }
        }
    }

    private func fail(_ message: String) -> Never {
        printError("smartstack-eval: \(message)")
        Self.exit(withError: ExitCode.failure)
    }
}

private func printError(_ message: String) {
    FileHandle.standardError.write(Data((message + "\n").utf8))
}
