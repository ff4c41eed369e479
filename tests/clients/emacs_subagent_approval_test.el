;;; emacs_subagent_approval_test.el --- who asks an approval, in batch Emacs  -*- lexical-binding: t; -*-
;; Run by tests/clients/test_emacs_subagent_approval.py: a `task` subagent's approval and the
;; main agent's, both denied; the minibuffer prompts and the chat buffer are recorded.

(require 'json)
(setq load-prefer-newer t)
(load (expand-file-name "shiro.el" (getenv "SHIRO_EMACS_PLUGIN")) nil t)

(defvar test-result nil)
(defvar test-ended nil)
(defvar test-prompts nil)
(add-hook 'shiro-turn-end-functions (lambda (event) (push event test-ended)))
(defun test-put (key value) (setq test-result (plist-put test-result key value)))

(condition-case err
    (let* ((workspace (file-name-as-directory (getenv "SHIRO_EMACS_WORKSPACE")))
           (default-directory workspace))
      (setq shiro-server-command (append (json-read-from-string (getenv "SHIRO_EMACS_SERVER")) nil))
      (setq shiro-settings '(:approvals "ask" :sandbox "off"))
      (find-file (expand-file-name "hello.py" workspace))
      (shiro-chat)
      (setq shiro-approval-function
            (lambda (title tool)
              (cl-letf (((symbol-function 'read-char-choice)
                         (lambda (prompt _chars) (push prompt test-prompts) ?n)))
                (shiro-ask-approval title tool))))
      (let* ((turn (plist-get (shiro-send "what does the page say?") :turnId))
             (deadline (+ (float-time) 90)))
        (while (and (not (cl-find turn test-ended :key (lambda (e) (plist-get e :turnId)) :test #'equal))
                    (< (float-time) deadline))
          (accept-process-output nil 0.05)))
      (test-put :prompts (vconcat (reverse test-prompts)))
      (test-put :chat (with-current-buffer "*shiro chat*" (buffer-substring-no-properties (point-min) (point-max))))
      (shiro-stop)
      (test-put :ok t))
  (error (test-put :error (format "%S" err))))

(with-temp-file (getenv "SHIRO_EMACS_OUT")
  (insert (json-encode test-result)))
(kill-emacs 0)
