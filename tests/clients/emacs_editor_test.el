;;; emacs_editor_test.el --- issue 38 in batch Emacs: flymake, context, code actions, inline edit  -*- lexical-binding: t; -*-
;; Run by tests/clients/test_emacs_editor.py, which scripts the fake provider and reads the JSON
;; this writes to $SHIRO_EMACS_OUT.  The diagnostics come from a flymake backend defined here (a
;; check that a value annotated `int' is not a string literal), through flymake's own machinery.

(require 'json)
(setq load-prefer-newer t)
(load (expand-file-name "shiro.el" (getenv "SHIRO_EMACS_PLUGIN")) nil t)

(defvar test-result nil)
(defvar test-ended nil "turn_end events, newest first.")
(add-hook 'shiro-turn-end-functions (lambda (event) (push event test-ended)))
(defun test-put (key value) (setq test-result (plist-put test-result key value)))
(defun test-wait (pred what &optional seconds)
  (let ((deadline (+ (float-time) (or seconds 90))))
    (while (and (not (funcall pred)) (< (float-time) deadline))
      (accept-process-output nil 0.05))
    (unless (funcall pred) (error "timed out waiting for %s" what))))
(defun test-turn (prompt)
  (let* ((result (shiro-send prompt)) (turn (plist-get result :turnId)))
    (test-wait (lambda () (cl-find turn test-ended :key (lambda (e) (plist-get e :turnId)) :test #'equal))
               (format "the end of %s" prompt))))

(defun test-int-check (report-fn &rest _)
  "A flymake backend: `NAME: int = \"...\"' is an error."
  (let (diags)
    (save-excursion
      (goto-char (point-min))
      (while (re-search-forward "^\\([a-z_]+\\): int = \\(\"[^\"]*\"\\)" nil t)
        (push (flymake-make-diagnostic (current-buffer) (match-beginning 2) (match-end 2) :error
                                       (format "%s is a str, not an int" (match-string 2)))
              diags)))
    (funcall report-fn diags)))

(condition-case err
    (let* ((workspace (file-name-as-directory (getenv "SHIRO_EMACS_WORKSPACE")))
           (default-directory workspace)
           (app (expand-file-name "app.py" workspace)))
      (setq shiro-server-command (append (json-read-from-string (getenv "SHIRO_EMACS_SERVER")) nil))
      (setq shiro-settings '(:approvals "auto" :diagnosticsWaitMs 8000))
      (find-file app)
      (setq-local flymake-diagnostic-functions (list #'test-int-check))
      (setq-local flymake-no-changes-timeout 0.1)
      (flymake-mode 1)
      (flymake-start)
      (test-wait (lambda () (flymake-diagnostics)) "flymake's first diagnostics")
      (test-put :before (mapcar #'flymake-diagnostic-text (flymake-diagnostics)))
      (shiro-chat)
      (shiro--command "shiro.status")
      ;; the prompt from app.py with the region on line 6
      (with-current-buffer (find-buffer-visiting app)
        (goto-char (point-min)) (forward-line 5)
        (push-mark (line-end-position) t t)
        (transient-mark-mode 1)
        (setq mark-active t)
        (bury-buffer "*shiro chat*"))
      (test-turn "make x a word")
      (with-current-buffer (find-buffer-visiting app)
        (deactivate-mark)
        (test-put :afterEdit (buffer-substring-no-properties (point-min) (point-max)))
        (test-put :flymakeAfter (mapcar #'flymake-diagnostic-text (flymake-diagnostics))))
      ;; shiro's code actions on the new error, as eglot asks for them
      (let* ((diags (with-current-buffer (find-buffer-visiting app)
                      (vconcat (mapcar (lambda (d) (list :range (shiro--range (flymake-diagnostic-beg d) (flymake-diagnostic-end d))
                                                         :message (flymake-diagnostic-text d) :severity 1))
                                       (flymake-diagnostics)))))
             (actions (jsonrpc-request shiro--server :textDocument/codeAction
                                       (list :textDocument (list :uri (shiro--uri app))
                                             :range (list :start '(:line 5 :character 0) :end '(:line 5 :character 0))
                                             :context (list :diagnostics diags)))))
        (test-put :codeActions (mapcar (lambda (a) (plist-get a :title)) (append actions nil)))
        ;; "Edit with shiro-neko…" runs shiro.ask {action: edit}: shiro/focusChat, the instruction, the diff, accepted
        (setq shiro-inline-edit-instruction-function (lambda () (getenv "SHIRO_EMACS_INSTRUCTION")))
        (setq shiro-inline-edit-confirm-function
              (lambda ()
                (test-put :diff (with-current-buffer "*shiro inline edit*" (buffer-substring-no-properties (point-min) (point-max))))
                t))
        (let ((edit (cl-find-if (lambda (a) (string-prefix-p "Edit with shiro-neko" (plist-get a :title))) (append actions nil))))
          (shiro--command "shiro.ask" (aref (plist-get (plist-get edit :command) :arguments) 0))))
      (test-wait (lambda () shiro-inline-edit-last) "the inline edit's resolution" 120)
      (test-put :resolved shiro-inline-edit-last)
      (with-current-buffer (find-buffer-visiting app)
        (test-wait (lambda () (string-match-p "^x: int = 1$" (buffer-substring-no-properties (point-min) (point-max))))
                   "the accepted edit" 30)
        (test-put :final (buffer-substring-no-properties (point-min) (point-max))))
      (shiro-stop)
      (test-put :ok t))
  (error (test-put :error (format "%S" err))))

(with-temp-file (getenv "SHIRO_EMACS_OUT")
  (insert (json-encode test-result)))
(kill-emacs 0)
