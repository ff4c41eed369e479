;;; emacs_model_test.el --- shiro-model in batch Emacs  -*- lexical-binding: t; -*-
;; Run by tests/clients/test_emacs_model.py (issue 39): shiro-model picks from shiro.models with
;; completing-read (answered from stdin), the next turn runs on it; "/model default" goes back.

(require 'json)
(setq load-prefer-newer t)
(load (expand-file-name "shiro.el" (getenv "SHIRO_EMACS_PLUGIN")) nil t)

(defvar test-result nil)
(defvar test-ended nil)
(add-hook 'shiro-turn-end-functions (lambda (event) (push event test-ended)))
(defun test-put (key value) (setq test-result (plist-put test-result key value)))

(condition-case err
    (let ((default-directory (file-name-as-directory (getenv "SHIRO_EMACS_WORKSPACE"))))
      (setq shiro-server-command (append (json-read-from-string (getenv "SHIRO_EMACS_SERVER")) nil))
      (shiro-chat)
      ;; The minibuffer reads "fake-model-large" from stdin (test_emacs_model.py wrote it).
      (test-put :picked (plist-get (call-interactively #'shiro-model) :model))
      (let ((turn (plist-get (shiro-send "hello") :turnId))
            (deadline (+ (float-time) 90)))
        (while (and (not (cl-find turn test-ended :key (lambda (e) (plist-get e :turnId)) :test #'equal))
                    (< (float-time) deadline))
          (accept-process-output nil 0.05)))
      (shiro-send "/model default")
      (test-put :back (plist-get (shiro--command "shiro.status") :model))
      (test-put :chat (with-current-buffer "*shiro chat*" (buffer-substring-no-properties (point-min) (point-max))))
      (shiro-stop)
      (test-put :ok t))
  (error (test-put :error (format "%S" err))))

(with-temp-file (getenv "SHIRO_EMACS_OUT")
  (insert (json-encode test-result)))
(kill-emacs 0)
