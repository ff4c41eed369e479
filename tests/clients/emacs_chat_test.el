;;; emacs_chat_test.el --- drives clients/emacs/shiro.el in batch Emacs  -*- lexical-binding: t; -*-
;; Run by tests/clients/test_emacs.py, which scripts the fake provider and reads the JSON this
;; writes to $SHIRO_EMACS_OUT.  Each step waits for the turn's `turn_end' event.

(load (expand-file-name "emacs_harness.el" (file-name-directory load-file-name)) nil t)

(defvar test-asked nil "Approvals asked: (title tool).")

(test-run
 (lambda (workspace)
   (let ((hello (expand-file-name "hello.py" workspace)))
     (setq shiro-settings '(:approvals "ask"))
     (find-file hello)
     (shiro-chat)
     ;; The request timeout, lowered from jsonrpc's 10 s so that a turn of a few seconds
     ;; outlasts it, as a 30-second turn outlasts the default. Lowered once the server is up:
     ;; its first requests wait for the LSP layer's import (server/startup/lsp_front.py answers only
     ;; `initialize` before it), which a loaded machine stretches past 1 s.
     (shiro--command "shiro.status")
     (setq jsonrpc-default-request-timeout 1)

     ;; 1. A turn longer than the request timeout completes.
     (let* ((start (float-time))
            (turn (test-turn "tell me a slow story")))
       (test-put :slowStatus (plist-get (car turn) :status))
       (test-put :slowEnd (plist-get (cdr turn) :status))
       (test-put :slowSeconds (- (float-time) start)))
     (test-put :chatAfterSlow (test-chat-text))

     ;; 2. An approval answered with a key (a = always), and the edit lands in the buffer, saved.
     (setq read-char-choice-use-read-key t)
     (setq shiro-approval-function
           (lambda (title tool)
             (push (list title tool) test-asked)
             (with-current-buffer "*shiro diff*"
               (test-put :approvalDiff (buffer-substring-no-properties (point-min) (point-max)))
               (goto-char (point-min))
               (search-forward "+print")
               (test-put :addedFace (format "%s" (get-text-property (1- (point)) 'face)))
               (test-put :diffMode (format "%s" major-mode)))
             (setq unread-command-events (list ?y))
             (shiro-ask-approval title tool)))
     (let ((turn (test-turn "greet emacs")))
       (test-put :editEnd (plist-get (cdr turn) :status)))
     (test-put :asked (mapcar #'car test-asked))
     (with-current-buffer (find-buffer-visiting hello)
       (test-put :bufferText (buffer-substring-no-properties (point-min) (point-max)))
       (test-put :bufferModified (if (buffer-modified-p) t :json-false))
       (test-put :modtimeCurrent (if (verify-visited-file-modtime (current-buffer)) t :json-false))
       ;; The user goes on editing and saves: no "changed since visited" question (batch
       ;; Emacs would fail reading its answer from stdin).
       (goto-char (point-max))
       (insert "# by hand\n")
       (save-buffer))
     (test-put :diskAfterSave (with-temp-buffer (insert-file-contents hello) (buffer-string)))
     ;; The approval's diff was shown in *shiro diff*, coloured by diff-mode; the turn's files
     ;; line is in the chat, and shiro-turn-diff shows that turn's diff.
     (test-put :chatAfterEdit (test-chat-text))
     (let ((turn-diff (with-current-buffer (shiro-turn-diff) (buffer-string))))
       (test-put :turnDiff turn-diff))

     ;; 3. C-g at the approval: answered (a deny), the turn ends, nothing waits.
     (setq shiro-approval-function (lambda (_title _tool) (signal 'quit nil)))
     (let ((turn (test-turn "run something")))
       (test-put :quitEnd (plist-get (cdr turn) :status)))
     (test-wait (lambda () (not (equal (plist-get shiro--status :waiting) "approval"))) "status without waiting" 10)
     (test-put :statusAfterQuit (list :running (plist-get shiro--status :running)
                                      :waiting (or (plist-get shiro--status :waiting) :json-false)))
     ;; 4. Deny with a reason: r, then the reason typed in the minibuffer (batch Emacs reads
     ;; the minibuffer from stdin, where test_emacs.py wrote it).
     (setq shiro-approval-function
           (lambda (title tool)
             (setq unread-command-events (list ?r))
             (shiro-ask-approval title tool)))
     (let ((turn (test-turn "change it again")))
       (test-put :reasonEnd (plist-get (cdr turn) :status)))
     ;; 5. The reasoning effort (shiro.effort).
     (test-put :effort (plist-get (shiro-effort "low") :effort))
     (test-put :effortReport (plist-get (shiro-effort) :effort))
     (test-put :modeLine (shiro-mode-line))
     (test-put :tasks (with-current-buffer "*shiro tasks*" (buffer-string)))
     (test-put :chat (test-chat-text))
     (shiro-stop)
     (test-put :ok t))))
