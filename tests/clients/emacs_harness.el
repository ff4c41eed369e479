;;; emacs_harness.el --- what every batch Emacs test script shares  -*- lexical-binding: t; -*-
;; Loaded by each tests/clients/emacs_*_test.el from its own folder, which then keeps only its
;; scenario:
;;   (load (expand-file-name "emacs_harness.el" (file-name-directory load-file-name)) nil t)
;;   (test-run (lambda (workspace) ...))
;; It loads clients/emacs/shiro.el from $SHIRO_EMACS_PLUGIN, collects the result plist that
;; `test-run' writes as JSON to $SHIRO_EMACS_OUT (the pytest file reads it; an error in the
;; scenario is its "error" field), and records every turn_end event.

(require 'json)
(require 'cl-lib)
(setq load-prefer-newer t)
(load (expand-file-name "shiro.el" (getenv "SHIRO_EMACS_PLUGIN")) nil t)

(defvar test-result nil "The plist written as JSON to $SHIRO_EMACS_OUT.")
(defvar test-ended nil "turn_end events, newest first.")

(defun test-put (key value) (setq test-result (plist-put test-result key value)))

(defun test-turn-end (turn)
  "The turn_end event of TURN (a turn id), nil while the turn runs."
  (cl-find turn test-ended :key (lambda (e) (plist-get e :turnId)) :test #'equal))

(defun test-wait (pred what &optional seconds)
  "Wait until PRED holds, SECONDS at most (90 when nil).
Then an error naming WHAT."
  (let ((deadline (+ (float-time) (or seconds 90))))
    (while (and (not (funcall pred)) (< (float-time) deadline))
      (accept-process-output nil 0.05))
    (unless (funcall pred) (error "timed out waiting for %s" what))))

(defun test-await-turn (turn)
  "Wait up to 90 s for the end of TURN.
No error if it does not come: the scenario's results tell."
  (let ((deadline (+ (float-time) 90)))
    (while (and (not (test-turn-end turn)) (< (float-time) deadline))
      (accept-process-output nil 0.05))))

(defun test-turn (prompt)
  "Send PROMPT from the chat and wait for its turn_end.
The value: (shiro-send's result . the event)."
  (let* ((result (shiro-send prompt))
         (turn (plist-get result :turnId)))
    (test-wait (lambda () (test-turn-end turn)) (format "the end of %s" prompt))
    (cons result (test-turn-end turn))))

(defun test-ended-count (n) (test-wait (lambda () (>= (length test-ended) n)) (format "turn %d" n)))

(defun test-chat-text ()
  (with-current-buffer "*shiro chat*" (buffer-substring-no-properties (point-min) (point-max))))

(cl-defun test-run (scenario &key hook-depth (describe-error (lambda (err) (format "%S" err))))
  "Run SCENARIO with the workspace's folder, then write the results and exit 0.
SCENARIO gets the workspace (also `default-directory'), with the server
command set; the result plist goes as JSON to $SHIRO_EMACS_OUT (pytest
judges it).
HOOK-DEPTH: where the turn_end recorder goes in `shiro-turn-end-functions';
DESCRIBE-ERROR: how an error of the scenario is written to the result's :error."
  (add-hook 'shiro-turn-end-functions (lambda (event) (push event test-ended)) hook-depth)
  (condition-case err
      (let* ((workspace (file-name-as-directory (getenv "SHIRO_EMACS_WORKSPACE")))
             (default-directory workspace))
        (setq shiro-server-command (append (json-read-from-string (getenv "SHIRO_EMACS_SERVER")) nil))
        (funcall scenario workspace))
    (error (test-put :error (funcall describe-error err))))
  (with-temp-file (getenv "SHIRO_EMACS_OUT")
    (insert (json-encode test-result)))
  (kill-emacs 0))

;;; emacs_harness.el ends here
