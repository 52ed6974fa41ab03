import Foundation
import Testing
@testable import Containers
@testable import Backups
import ContainersTestSupport
import PropertyList

/// The parts of the restic target that need no repository: the version
/// floor, restic's JSON, the repository string, and failures told apart.
/// (Everything with a repository is in EndToEndTests' ResticBackupTests,
/// with the real restic.)
@Suite struct ResticRepositoryTests {
    @Test func versionsAreReadFromResticVersionAndComparedNumerically() {
        #expect(ResticVersion(versionOutput: "restic 0.14.0 compiled with go1.19.8 on linux/amd64\n") == ResticVersion(major: 0, minor: 14, patch: 0))
        #expect(ResticVersion(versionOutput: "restic 0.16.4-dev (compiled manually) compiled with go1.22 on linux/amd64")
                == ResticVersion(major: 0, minor: 16, patch: 4))
        #expect(ResticVersion(versionOutput: "rustic 0.14.0") == nil)
        #expect(ResticVersion(major: 0, minor: 9, patch: 6) < ResticRepository.minimumVersion)
        #expect(ResticVersion(major: 0, minor: 13, patch: 1) < ResticRepository.minimumVersion)
        #expect(!(ResticVersion(major: 0, minor: 14, patch: 0) < ResticRepository.minimumVersion))
        #expect(ResticVersion(major: 1, minor: 0, patch: 0) > ResticVersion(major: 0, minor: 18, patch: 0))
    }

    /// An older restic is refused before anything is done. (Debian has no
    /// older restic to install; a program that answers `version` as restic
    /// 0.13.1 does stands in for it here, and only here.)
    @Test func anOlderResticIsRefusedWithAClearMessage() throws {
        let s = Scratch()
        let old = s.path + "/restic-0.13"
        try s.write("#!/bin/sh\necho 'restic 0.13.1 compiled with go1.18 on linux/amd64'\n", to: old)
        chmod(old, 0o755)
        #expect(throws: ResticError.tooOld(found: "0.13.1")) { try ResticRepository("/nowhere", password: nil, program: old).checkVersion() }
        #expect(ResticError.tooOld(found: "0.13.1").description == "restic 0.13.1 is too old: AppHome needs restic 0.14.0 or newer")
        #expect(throws: ResticError.missing) {
            try ResticRepository("/nowhere", password: nil, program: s.path + "/no-such-restic").checkVersion()
        }
        #expect(try ResticRepository("/nowhere", password: nil).checkVersion() >= ResticRepository.minimumVersion)
    }

    @Test func resticJSONIsReadPastItsPasswordLineAndItsNulls() throws {
        let out = Array("reading repository password from stdin\n[{\"tags\":[\"apphome\",\"com.x\"],\"host\":\"\",\"paths\":null,\"keep\":[],\"remove\":[{\"time\":\"2026-12-03T11:19:52Z\",\"id\":\"9eef9a29c8\",\"short_id\":\"9eef9a29\",\"hostname\":\"vm\",\"tags\":[\"apphome\",\"com.x\"],\"note\":\"a \\\"null\\\" in text\"}]}]\n".utf8)
        let value = try #require(ResticRepository.json(out))
        guard case .array(let groups) = value, case .array(let removed)? = groups.first?.dictionaryValue?["remove"] else {
            Issue.record("\(value)"); return
        }
        #expect(groups.first?.dictionaryValue?["paths"] == .string(""))
        let snapshot = try #require(ResticSnapshot(json: removed[0]))
        #expect(snapshot.id == "9eef9a29c8" && snapshot.shortID == "9eef9a29" && snapshot.tags == ["apphome", "com.x"])
        #expect(removed[0].dictionaryValue?["note"] == .string("a \"null\" in text"))
        #expect(ResticRepository.json(Array("Fatal: wrong password\n".utf8)) == nil)
    }

    @Test func repositoryStringsAreTakenAsResticTakesThem() {
        #expect(ResticRepository.parse("restic:/media/usb/restic") == "/media/usb/restic")
        #expect(ResticRepository.parse("restic:sftp:u@host:/srv/r") == "sftp:u@host:/srv/r")
        #expect(ResticRepository.parse("restic:rest:http://127.0.0.1:8000/") == "rest:http://127.0.0.1:8000/")
        #expect(ResticRepository.parse("restic:") == nil)
        #expect(ResticRepository.parse("/media/usb") == nil)
    }

    @Test func failuresAreToldApartFromResticsOutput() {
        let repo = ResticRepository("rest:http://127.0.0.1:9/", password: nil)
        func run(_ status: Int32, _ err: String) -> ResticRepository.Run {
            ResticRepository.Run(status: .exited(status), stdout: [], stderr: err)
        }
        #expect(repo.classify(run(1, "Fatal: wrong password or no key found\n"), command: "snapshots") == .wrongPassword(repository: repo.repository))
        #expect(repo.classify(run(12, ""), command: "snapshots") == .wrongPassword(repository: repo.repository))
        #expect(repo.classify(run(1, "Fatal: unable to open config file: stat /x/config: no such file or directory\nIs there a repository at the following location?\n/x\n"),
                              command: "cat") == .noRepository(repository: repo.repository))
        let down = repo.classify(ResticRepository.Run(status: .signalled(9), stdout: [],
                                                      stderr: "Load(<config/0000000000>, 0, 0) returned error, retrying after 552ms: Get \"http://127.0.0.1:9/config\": dial tcp 127.0.0.1:9: connect: connection refused\n"),
                                 command: "cat")
        guard case .unreachable = down else { Issue.record("\(down)"); return }
        #expect(repo.classify(run(1, "Fatal: something else\n"), command: "prune") == .failed(command: "prune", status: 1, detail: "Fatal: something else"))
    }
}
