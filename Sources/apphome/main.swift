// apphome: install, update and uninstall apps, and run them in their sandbox.
// Statically linked in release; verbs that may need the Secret Service run in
// apphome-secret-service (AppHomeMain).
import AppHomeCommand

AppHomeMain.run(handsOffSecretService: true)
