;;; shiro.el --- shiro-neko, the coding agent, in Emacs (on eglot)  -*- lexical-binding: t; -*-

;; Version: 0.1
;; Package-Requires: ((emacs "28.1") (eglot "1.9"))
;; Keywords: tools, convenience

;;; Commentary:

;; A thin view on the shiro-neko language server (`shiro-lsp'), in the spirit of the Neovim
;; plugin (clients/nvim): `M-x shiro-chat' opens a chat buffer with streamed replies, tool
;; calls and approvals; the task list shows in a side window and the context gauge in the
;; mode line.  See docs/emacs.md.
;;
;; eglot runs the server process, the JSON-RPC connection and the standard requests
;; (initialize, workspace/configuration, workspace/applyEdit).  The server is connected for a
;; major mode no buffer has (`shiro--no-mode'), so it never takes a buffer from the language
;; server eglot runs for it: shiro.el tells the server about the project's file buffers itself
;; (didOpen/didChange/didClose), which is what lets the agent read unsaved text and edit open
;; buffers through workspace/applyEdit, saved through `shiro/saveDocuments'.
;;
;; Turns are sent with `shiro.chat {wait: false}': jsonrpc gives up on a request after
;; `jsonrpc-default-request-timeout' (10 s), and a turn takes longer than that; the turn's end
;; is its `turn_end' event.

;;; Code:

(require 'cl-lib)
(require 'diff-mode)
(require 'eglot)
(require 'jsonrpc)
(require 'project)
(require 'seq)
(require 'subr-x)

(defgroup shiro nil
  "shiro-neko, a coding agent behind a language server."
  :group 'tools
  :prefix "shiro-")

(defcustom shiro-server-command '("shiro-lsp")
  "The command that starts the shiro-neko language server."
  :type '(repeat string))

(defcustom shiro-settings nil
  "The `shiro' settings section as a plist, sent as initializationOptions.
For example (:model \"gpt-5\" :approvals \"ask\").  See docs/protocol.md."
  :type 'plist)

(defcustom shiro-approval-function #'shiro-ask-approval
  "Asks about one tool call: called with TITLE and TOOL-NAME.
Returns \"allow\", \"always\" or \"deny\", (\"deny\" . REASON): a deny whose reason the
model reads, or (\"always\" . SCOPE): SCOPE \"session\", \"workspace\" or \"user\" keeps the
call's rule there.  A quit (C-g) or an error is a deny."
  :type 'function)

(defcustom shiro-diff-max-lines 400
  "The most lines of an approval's diff shown in the *shiro diff* buffer (the server caps at 400)."
  :type 'integer)

(defcustom shiro-show-tasks t
  "Non-nil: show the task list in a side window when it changes."
  :type 'boolean)

(defface shiro-dim '((t :inherit shadow)) "Tool calls and notes in the chat buffer.")
(defface shiro-warn '((t :inherit warning)) "Notices and approvals in the chat buffer.")
(defface shiro-prompt '((t :inherit minibuffer-prompt)) "The user's prompts in the chat buffer.")

(defclass shiro-server (eglot-lsp-server) ()
  :documentation "The shiro-neko language server.")

(defvar shiro--server nil "The running `shiro-server', or nil.")
(defvar shiro--root nil "The project root the server runs for.")
(defvar shiro--status nil "The latest `shiro/status' payload (a plist).")
(defvar shiro--running nil "Turn ids sent with `shiro.chat' whose `turn_end' has not come.")
(defvar shiro--images nil "Images `shiro-attach-image' holds for the next prompt, newest first.")
(defvar shiro--last-changed-turn nil "The newest turn that changed files (its id), for `shiro-turn-diff'.")
(defvar shiro--docs (make-hash-table :test #'eq) "Buffer -> version, the buffers the server has open.")
(defvar shiro--dirty nil "Buffers changed since their last didChange.")
(defvar shiro--flush-timer nil)
(defvar shiro-turn-end-functions nil
  "Called with the `turn_end' event (a plist) when a turn ends.")

(define-derived-mode shiro--no-mode fundamental-mode "shiro-none"
  "The major mode eglot connects the shiro server for: no buffer has it.")

;;; The server ---------------------------------------------------------------------------------

(defun shiro--project ()
  (or (project-current) (cons 'transient default-directory)))

(defun shiro--live-p ()
  (and shiro--server (jsonrpc-running-p shiro--server)))

(defun shiro-start ()
  "Start the shiro-neko server for the current project (once)."
  (interactive)
  (unless (shiro--live-p)
    (let* ((project (shiro--project))
           (eglot-sync-connect t)
           (eglot-autoreconnect nil))
      (setq shiro--root (file-name-as-directory (expand-file-name (project-root project))))
      (setq shiro--server (eglot--connect '(shiro--no-mode) project 'shiro-server
                                          shiro-server-command "shiro"))
      (shiro--wait-connected)
      (add-hook 'find-file-hook #'shiro--track-buffer)
      (add-hook 'kill-buffer-hook #'shiro--untrack-buffer)
      (unless (member '(:eval (shiro-mode-line)) global-mode-string)
        (setq global-mode-string (append global-mode-string '((:eval (shiro-mode-line))))))
      (dolist (buffer (buffer-list))
        (with-current-buffer buffer (shiro--track-buffer)))))
  shiro--server)

(defun shiro--wait-connected ()
  (let ((deadline (+ (float-time) 60)))
    (while (and (not (eglot--capabilities shiro--server)) (< (float-time) deadline))
      (accept-process-output nil 0.05))
    (unless (eglot--capabilities shiro--server)
      (error "shiro: the server did not answer initialize"))))

(defun shiro-stop ()
  "Shut the server down (it saves the session and logs how to resume it)."
  (interactive)
  (when (shiro--live-p)
    (eglot-shutdown shiro--server nil 10))
  (clrhash shiro--docs)
  (setq shiro--server nil shiro--running nil))

(cl-defmethod eglot-client-capabilities :around ((_s shiro-server))
  (let ((caps (cl-call-next-method)))
    ;; Approvals in our own prompt (y / a / n, C-g is a no); edits saved by the editor.
    ;; editor: shiro/diagnostics from flymake, shiro/navigate from xref (shiro-editor.el).
    (plist-put caps :experimental '(:shiro (:approvals t :saveDocuments t :editor (:diagnostics t :navigation t))))))

(cl-defmethod eglot-initialization-options ((_s shiro-server))
  (or shiro-settings eglot--{}))

(defun shiro--command (name &optional args)
  "Run the server command NAME with ARGS (a plist) and return its result."
  (shiro--flush-changes)
  (jsonrpc-request (shiro-start) :workspace/executeCommand
                   (list :command name :arguments (vector (or args eglot--{})))))

;;; Buffers the server sees --------------------------------------------------------------------

(defun shiro--uri (file) (eglot--path-to-uri file))

(defun shiro--ours-p ()
  (and buffer-file-name shiro--root (shiro--live-p)
       (string-prefix-p shiro--root (expand-file-name buffer-file-name))))

(defun shiro--text ()
  (save-restriction (widen) (buffer-substring-no-properties (point-min) (point-max))))

(defun shiro--track-buffer ()
  "Tell the server about this file buffer of the project (didOpen)."
  (when (and (shiro--ours-p) (not (gethash (current-buffer) shiro--docs)))
    (puthash (current-buffer) 1 shiro--docs)
    (add-hook 'after-change-functions #'shiro--changed nil t)
    (jsonrpc-notify shiro--server :textDocument/didOpen
                    (list :textDocument (list :uri (shiro--uri buffer-file-name) :languageId "plaintext"
                                              :version 1 :text (shiro--text))))))

(defun shiro--untrack-buffer ()
  (when (gethash (current-buffer) shiro--docs)
    (remhash (current-buffer) shiro--docs)
    (setq shiro--dirty (delq (current-buffer) shiro--dirty))
    (when (and buffer-file-name (shiro--live-p))
      (jsonrpc-notify shiro--server :textDocument/didClose
                      (list :textDocument (list :uri (shiro--uri buffer-file-name)))))))

(defun shiro--changed (&rest _)
  (cl-pushnew (current-buffer) shiro--dirty)
  (unless shiro--flush-timer
    (setq shiro--flush-timer (run-with-idle-timer 0.3 nil #'shiro--flush-changes))))

(defun shiro--flush-changes ()
  "Send the whole text of every changed buffer (didChange), before anything else goes out."
  (when shiro--flush-timer (cancel-timer shiro--flush-timer))
  (setq shiro--flush-timer nil)
  (let ((dirty shiro--dirty))
    (setq shiro--dirty nil)
    (dolist (buffer dirty)
      (when (and (buffer-live-p buffer) (gethash buffer shiro--docs) (shiro--live-p))
        (with-current-buffer buffer
          (let ((version (1+ (gethash buffer shiro--docs))))
            (puthash buffer version shiro--docs)
            (jsonrpc-notify shiro--server :textDocument/didChange
                            (list :textDocument (list :uri (shiro--uri buffer-file-name) :version version)
                                  :contentChanges (vector (list :text (shiro--text)))))))))))

;;; Requests from the server -------------------------------------------------------------------

(cl-defmethod eglot-handle-request ((_s shiro-server) (_m (eql workspace/applyEdit)) &key _label edit)
  ;; The user said yes to the tool call already: no second question.
  (eglot--apply-workspace-edit edit nil)
  (shiro--flush-changes)  ; the server's copy of the buffer follows at once
  '(:applied t))

(cl-defmethod eglot-handle-request ((_s shiro-server) (_m (eql shiro/saveDocuments)) &key uris)
  (dolist (uri (append uris nil))
    (let ((buffer (find-buffer-visiting (eglot--uri-to-path uri))))
      (when buffer
        (with-current-buffer buffer
          (let ((save-silently t)) (save-buffer))))))
  nil)

(defvar shiro--approval-asker "shiro-neko"
  "Who asks the approval being answered.
\"shiro-neko's task subagent\" for a call of a `task' subagent (the
request's parentToolCallId), which the user may not have seen start.")

(defun shiro-ask-approval (title _tool-name)
  "Ask in the minibuffer: y allows once, a always (the call's rule, this session), f always in
this folder, u always for you everywhere, n denies, r denies with a reason (read from the
minibuffer) that the model is told."
  (pcase (read-char-choice
          (format "%s wants to %s  [y]es / [a]lways (session / [f]older / [u]ser) / [n]o / [r]eason: "
                  shiro--approval-asker title)
          '(?y ?a ?f ?u ?n ?r))
    (?y "allow") (?a "always") (?f '("always" . "workspace")) (?u '("always" . "user"))
    (?r (cons "deny" (read-string "Why not (the model reads this): ")))
    (_ "deny")))

(defun shiro--decide (title tool-name)
  "The user's answer: a decision string, or (\"deny\" . REASON).  A quit (C-g) or an error is
a deny, and is answered all the same."
  (condition-case err
      (let ((answer (funcall shiro-approval-function title tool-name)))
        (cond ((member answer '("allow" "always" "deny")) answer)
              ((and (consp answer) (equal (car answer) "deny") (stringp (cdr answer))) answer)
              ((and (consp answer) (equal (car answer) "always") (member (cdr answer) '("session" "workspace" "user"))) answer)
              (t "deny")))
    (quit "deny")
    (error (message "shiro: approval failed: %s" (error-message-string err)) "deny")))

(defun shiro--show-diff (diff header)
  "Show DIFF (a unified diff, already capped by the server) in *shiro diff*, coloured by
`diff-mode', under HEADER; at most `shiro-diff-max-lines' lines.  The buffer."
  (let* ((lines (split-string diff "\n"))
         (shown (if (> (length lines) shiro-diff-max-lines)
                    (append (seq-take lines shiro-diff-max-lines)
                            (list (format "… %d more lines" (- (length lines) shiro-diff-max-lines))))
                  lines))
         (buffer (get-buffer-create "*shiro diff*")))
    (with-current-buffer buffer
      (let ((inhibit-read-only t))
        (erase-buffer)
        (insert header "\n" (string-join shown "\n") "\n")
        (diff-mode)
        (font-lock-ensure)
        (setq buffer-read-only t)
        (goto-char (point-min))))
    (display-buffer buffer)
    buffer))

(cl-defmethod eglot-handle-request ((_s shiro-server) (_m (eql shiro/approve)) &rest params)
  (let* ((title (plist-get params :title))
         (tool (plist-get params :toolName))
         (diff (plist-get params :diff))
         (subagent (stringp (plist-get params :parentToolCallId)))
         (shiro--approval-asker (if subagent "shiro-neko's task subagent" "shiro-neko")))
    (shiro--insert (format "? %s%s\n" title (if subagent " (asked by the task subagent)" "")) 'shiro-warn)
    (when (stringp diff)
      (shiro--show-diff diff (format "# %s wants to %s (%s diff lines)" shiro--approval-asker title (plist-get params :diffLines))))
    (let* ((answer (shiro--decide title tool))
           (decision (if (consp answer) (car answer) answer))
           (scope (and (consp answer) (equal decision "always") (cdr answer)))
           (reason (and (consp answer) (equal decision "deny") (cdr answer))))
      (shiro--insert (format "  %s%s\n" (pcase decision ("allow" "allowed") ("always" "always allowed") (_ "denied"))
                             (cond ((and reason (not (string-empty-p reason))) (format ": %s" reason))
                                   ((member scope '("workspace" "user")) (format " (%s)" scope))
                                   (t "")))
                     'shiro-dim)
      (cond ((and reason (not (string-empty-p reason))) (list :decision decision :reason reason))
            ((member scope '("workspace" "user")) (list :decision decision :scope scope))
            (t (list :decision decision))))))

(cl-defmethod eglot-handle-request ((_s shiro-server) (_m (eql window/showMessageRequest)) &key message actions &allow-other-keys)
  ;; eglot's own handler lets a C-g escape, and the server then waits for ever for the answer.
  (condition-case nil
      (let* ((titles (mapcar (lambda (a) (plist-get a :title)) (append actions nil)))
             (label (completing-read (format "shiro-neko: %s " message) titles nil t)))
        (if (member label titles) (list :title label) :null))
    (quit :null)))

;;; Notifications ------------------------------------------------------------------------------

(cl-defmethod eglot-handle-notification ((_s shiro-server) (_m (eql shiro/event)) &rest event)
  (shiro--on-event event))

(cl-defmethod eglot-handle-notification ((_s shiro-server) (_m (eql shiro/status)) &rest status)
  (setq shiro--status status)
  (force-mode-line-update t))

(cl-defmethod eglot-handle-notification ((_s shiro-server) (_m (eql shiro/todos)) &rest payload)
  (let ((buffer (get-buffer-create "*shiro tasks*"))
        (todos (append (plist-get payload :todos) nil)))
    (with-current-buffer buffer
      (let ((inhibit-read-only t))
        (erase-buffer)
        (insert (or (plist-get payload :rendered) "")))
      (special-mode))
    (when (and shiro-show-tasks todos)
      (display-buffer-in-side-window buffer '((side . right) (window-width . 40))))))

(defun shiro--on-subagent-event (type event)
  "A `task' subagent's EVENT of TYPE, indented under its call (issue 40).
Its streamed text is not shown: its report is the task call's result."
  (pcase type
    ("tool_call"
     (shiro--insert (format "      ┆ → %s %s\n" (plist-get event :toolName)
                            (shiro--one-line (json-encode (plist-get event :input)) 70))
                    'shiro-dim))
    ("tool_result"
     (shiro--insert (format "      ┆   %s %s\n" (if (eq (plist-get event :isError) t) "✗" "✓")
                            (shiro--one-line (plist-get event :output) 70))
                    'shiro-dim))
    ("notice" (shiro--insert (format "      ┆ ! %s\n" (plist-get event :message)) 'shiro-dim))))

(defun shiro--on-event (event)
  (let ((type (plist-get event :type)))
    (pcase type
      ((guard (stringp (plist-get event :parentToolCallId))) (shiro--on-subagent-event type event))
      ("text_delta" (shiro--insert (plist-get event :text)))
      ("tool_call"
       (shiro--insert (format "\n→ %s %s\n" (plist-get event :toolName)
                              (shiro--one-line (json-encode (plist-get event :input)) 80))
                      'shiro-dim))
      ("tool_result"
       (shiro--insert (format "  %s %s\n" (if (eq (plist-get event :isError) t) "✗" "✓")
                              (shiro--one-line (plist-get event :output) 80))
                      'shiro-dim))
      ((or "notice" "compacted") (shiro--insert (format "\n! %s\n" (plist-get event :message)) 'shiro-warn))
      ("queued" (shiro--insert (format "(queued: %s before it)\n" (plist-get event :position)) 'shiro-dim))
      ("turn_end"
       (setq shiro--running (delete (plist-get event :turnId) shiro--running))
       (let ((status (plist-get event :status)))
         (shiro--insert (if (equal status "completed") "\n\n"
                          (format "\n[%s%s]\n\n" status
                                  (if (plist-get event :error) (concat ": " (plist-get event :error)) "")))
                        'shiro-dim))
       ;; A missing or refused key (the server's "Set up model"): Emacs's way to give one.
       (when (and (stringp (plist-get event :error)) (string-search "Set up model" (plist-get event :error)))
         (shiro--insert "[Set up model: M-x shiro-model-setup (endpoint and key for this server)]\n\n" 'shiro-warn))
       (let ((files (append (plist-get event :files) nil)))
         (when files
           (setq shiro--last-changed-turn (plist-get event :turnId))
           (shiro--insert (format "%d file%s changed: %s  (M-x shiro-turn-diff)\n\n" (length files)
                                  (if (= (length files) 1) "" "s")
                                  (mapconcat (lambda (f) (format "%s%s" (pcase (plist-get f :change)
                                                                          ("added" "+") ("deleted" "-") (_ "~"))
                                                                 (plist-get f :path)))
                                             files " "))
                          'shiro-dim)))
       (force-mode-line-update t)
       (run-hook-with-args 'shiro-turn-end-functions event)))))

(defun shiro--one-line (text width)
  (let ((line (replace-regexp-in-string "[\n\t ]+" " " (string-trim (or text "")))))
    (if (> (length line) width) (concat (substring line 0 (1- width)) "…") line)))

;;; The mode line ------------------------------------------------------------------------------

(defun shiro-mode-line ()
  "The context gauge: \"shiro 12%\", with \"plan\" in plan mode, ● while a turn runs and ? while an approval waits."
  (when (and shiro--status (shiro--live-p))
    (let ((percent (plist-get shiro--status :contextPercent))
          (level (plist-get shiro--status :level)))
      (propertize (format " shiro %s%%%s%s%s " (round (or percent 0))
                          (if (equal (plist-get shiro--status :mode) "plan") " plan" "")
                          (if (or shiro--running (eq (plist-get shiro--status :running) t)) " ●" "")
                          (if (equal (plist-get shiro--status :waiting) "approval") " ?" ""))
                  'face (pcase level ("red" 'error) ("amber" 'warning) (_ nil))))))

;;; The chat buffer ----------------------------------------------------------------------------

(defvar shiro-chat-mode-map
  (let ((map (make-sparse-keymap)))
    (define-key map (kbd "RET") #'shiro-chat-send-input)
    (define-key map (kbd "C-c C-c") #'shiro-abort)
    (define-key map (kbd "C-c C-k") #'shiro-abort)
    map))

(define-derived-mode shiro-chat-mode text-mode "shiro"
  "The shiro-neko chat: type after the last `›' and press RET.
Lines starting with / run a command: /compact [focus], /notes, /sessions, /resume [id], /new, /abort."
  (setq-local shiro--input (make-marker)))

(defvar-local shiro--input nil "Where the input starts in the chat buffer.")

(defun shiro--chat-buffer ()
  (let ((buffer (get-buffer-create "*shiro chat*")))
    (with-current-buffer buffer
      (unless (derived-mode-p 'shiro-chat-mode)
        (shiro-chat-mode)
        (shiro--prompt-line)))
    buffer))

(defun shiro--prompt-line ()
  (let ((inhibit-read-only t))
    (goto-char (point-max))
    (insert (propertize "› " 'face 'shiro-prompt 'read-only t 'rear-nonsticky t 'front-sticky '(read-only)))
    (set-marker shiro--input (point))))

(defun shiro--insert (text &optional face)
  "Insert TEXT before the input line of the chat buffer."
  (when (and text (not (string-empty-p text)))
    (with-current-buffer (shiro--chat-buffer)
      (let ((inhibit-read-only t)
            (at-end (= (point) (point-max))))
        (save-excursion
          (goto-char (- shiro--input 2))
          (insert (propertize text 'read-only t 'face face)))
        (when at-end (goto-char (point-max)))))))

(defun shiro-chat (&optional prompt)
  "Open the chat buffer; with PROMPT (or when called with a prefix argument) send it."
  (interactive (list (and current-prefix-arg (read-string "shiro: "))))
  (shiro-start)
  (pop-to-buffer (shiro--chat-buffer))
  (when (and prompt (not (string-empty-p prompt)))
    (shiro-send prompt)))

(defun shiro-chat-send-input ()
  "Send what was typed after the last `›'."
  (interactive)
  (let ((text (string-trim (buffer-substring-no-properties shiro--input (point-max)))))
    (let ((inhibit-read-only t)) (delete-region shiro--input (point-max)))
    (unless (string-empty-p text) (shiro-send text))))

(defun shiro-send (text)
  "Send TEXT: a prompt, or a slash command."
  (interactive "sshiro: ")
  (if (and (string-prefix-p "/" text) (not (shiro--custom-command-p text)))
      (shiro--slash text)
    (shiro--insert (format "\n› %s\n\n" text) 'shiro-prompt)
    (let* ((images (reverse shiro--images))
           (context (shiro-editor-context))  ; what the user sees (shiro-editor.el)
           (result (shiro--command "shiro.chat" (append (list :prompt text :wait :json-false)
                                                       (when images (list :images (vconcat images)))
                                                       (when context (list :context context))))))
      (setq shiro--images nil)
      (push (plist-get result :turnId) shiro--running)
      result)))

(defconst shiro--image-types
  '(("png" . "image/png") ("jpg" . "image/jpeg") ("jpeg" . "image/jpeg") ("gif" . "image/gif") ("webp" . "image/webp"))
  "What the server takes as images (docs/extending.md \"Images\").")

(defun shiro-attach-image (file)
  "Send the image FILE with the next prompt.
PNG, JPEG, GIF or WebP; at most 20 MB, 8 with one prompt."
  (interactive "fshiro image: ")
  (let ((type (cdr (assoc (downcase (or (file-name-extension file) "")) shiro--image-types))))
    (cond ((not type) (user-error "shiro: %s is not named like an image (png, jpg, gif, webp)" file))
          ((> (file-attribute-size (file-attributes file)) (* 20 1024 1024))
           (user-error "shiro: %s is over 20 MB; attach a smaller image" file))
          ((>= (length shiro--images) 8) (user-error "shiro: at most 8 images go with one prompt")))
    (push (list :mediaType type :name (file-name-nondirectory file)
                :data (with-temp-buffer
                        (set-buffer-multibyte nil)
                        (insert-file-contents-literally file)
                        (base64-encode-region (point-min) (point-max) t)
                        (buffer-string)))
          shiro--images)
    (message "shiro: %s goes with the next prompt (%d attached)" (file-name-nondirectory file) (length shiro--images))))

(defun shiro--slash (text)
  (let* ((parts (split-string (string-trim text) " +" t))
         (name (car parts))
         (rest (string-join (cdr parts) " ")))
    (pcase name
      ("/compact" (shiro-compact rest))
      ("/notes" (shiro-notes))
      ("/sessions" (call-interactively #'shiro-sessions))
      ("/resume" (shiro-resume (and (not (string-empty-p rest)) rest)))
      ("/new" (shiro-new-session))
      ("/abort" (shiro-abort))
      ("/effort" (shiro-effort (and (not (string-empty-p rest)) rest)))
      ("/permissions" (call-interactively #'shiro-permissions))
      ("/model" (shiro-model (and (not (string-empty-p rest)) rest)))
      ("/diff" (shiro-turn-diff))
      (_ (shiro--insert (format "unknown command %s (/compact /notes /sessions /resume /new /abort /effort /diff)\n" name)
                        'shiro-warn)))))

;; Skills and custom commands (docs/extending.md): `shiro.commands' lists them; `/name args' for
;; one is sent as a prompt, which the server expands for the model.
(defun shiro--custom-commands ()
  "Alist (NAME . ROW) of the skills and custom commands `shiro.commands' lists."
  (let (out)
    (seq-doseq (row (plist-get (shiro--command "shiro.commands") :commands))
      (unless (equal (plist-get row :source) "builtin")
        (push (cons (concat "/" (plist-get row :name)) row) out)))
    (nreverse out)))

(defun shiro--custom-command-p (text)
  (assoc (car (split-string (string-trim text) " +" t)) (shiro--custom-commands)))

(defun shiro-command (name args)
  "Run a skill or custom command NAME (completed from `shiro.commands') with ARGS."
  (interactive
   (let* ((rows (shiro--custom-commands))
          (name (completing-read "shiro command: "
                                 (lambda (str pred action)
                                   (if (eq action 'metadata)
                                       `(metadata (annotation-function
                                                   . ,(lambda (c) (concat "  " (plist-get (cdr (assoc c rows)) :description)))))
                                     (complete-with-action action rows str pred)))
                                 nil t "/")))
     (list name (read-string (format "%s %s: " name (or (plist-get (cdr (assoc name rows)) :argumentHint) "arguments"))))))
  (shiro-send (string-trim (concat name " " args))))

(defun shiro-turn-diff (&optional turn-id path)
  "Show what turn TURN-ID changed (default: the newest turn that changed files), only PATH when
given, in *shiro diff* (`shiro.turnDiff')."
  (interactive)
  (let ((turn (or turn-id shiro--last-changed-turn)))
    (unless turn (user-error "No turn changed files yet"))
    (let ((result (shiro--command "shiro.turnDiff" (append (list :turnId turn) (and path (list :path path))))))
      (shiro--show-diff (plist-get result :diff)
                        (format "# turn %s%s" turn (if (eq (plist-get result :truncated) t) " (cut at 400 lines)" ""))))))

(defun shiro--rule-label (rule)
  (format "%-5s %s (%s)" (plist-get rule :decision) (plist-get rule :rule) (plist-get rule :scope)))

(defun shiro-permissions (&optional label)
  "List the permission rules (`shiro.permissions') in the chat buffer; interactively, pick one
(LABEL) to remove it after a yes (`shiro.removePermission').  The rules, a list of plists."
  (interactive
   (let ((labels (mapcar #'shiro--rule-label (plist-get (shiro--command "shiro.permissions") :rules))))
     (list (and labels (completing-read "Remove a permission rule (C-g keeps them all): " labels nil t)))))
  (let* ((rules (append (plist-get (shiro--command "shiro.permissions") :rules) nil))
         (rule (seq-find (lambda (r) (equal (shiro--rule-label r) label)) rules)))
    (shiro--insert (if rules
                       (concat (mapconcat (lambda (r) (concat "  " (shiro--rule-label r))) rules "\n") "\n")
                     "[no permission rules: an approval's a/f/u adds one]\n")
                   'shiro-dim)
    (when (and rule (yes-or-no-p (format "Remove %s? " (shiro--rule-label rule))))
      (let ((result (shiro--command "shiro.removePermission"
                                    (list :rule (plist-get rule :rule) :scope (plist-get rule :scope)
                                          :decision (plist-get rule :decision)))))
        (shiro--insert (format "[%s %s]\n" (if (eq (plist-get result :removed) t) "removed" "not there any more:")
                               (plist-get rule :rule))
                       'shiro-dim)))
    rules))

(defconst shiro--efforts '("minimal" "low" "medium" "high" "default"))

(defun shiro-effort (&optional effort)
  "Set the reasoning effort of the next requests (\"default\" clears it), or with no EFFORT
from Lisp only report it (`shiro.effort').  The result plist."
  (interactive (list (completing-read "Reasoning effort: " shiro--efforts nil t)))
  (let ((result (shiro--command "shiro.effort" (and effort (not (string-empty-p effort)) (list :effort effort)))))
    (shiro--insert (format "[effort: %s · %s]\n" (or (plist-get result :effort) "the endpoint's default")
                           (plist-get result :model))
                   'shiro-dim)
    result))

(defun shiro-abort ()
  "Abort the running turn and clear the queued prompts."
  (interactive)
  (let ((result (shiro--command "shiro.abort")))
    (shiro--insert (format "[abort: %s queued prompt(s) cleared]\n" (plist-get result :clearedQueued)) 'shiro-dim)))

(defun shiro-compact (&optional focus)
  "Summarise the session so far (/compact), with an optional FOCUS."
  (interactive "sFocus (empty for none): ")
  (let ((result (shiro--command "shiro.compact" (if (and focus (not (string-empty-p focus)))
                                                    (list :focus focus) eglot--{}))))
    (shiro--insert (format "[compacted: %s → %s messages]\n" (plist-get result :messagesBefore)
                           (plist-get result :messagesAfter))
                   'shiro-dim)))

(defun shiro-notes ()
  "Show the project memory (/notes)."
  (interactive)
  (let ((entries (append (plist-get (shiro--command "shiro.notes") :entries) nil)))
    (shiro--insert (if entries
                       (mapconcat (lambda (e) (format "  [%s] %s" (plist-get e :kind) (plist-get e :text)))
                                  entries "\n")
                     "  no notes yet")
                   'shiro-dim)
    (shiro--insert "\n")))

(defun shiro-new-session ()
  "Start a new session."
  (interactive)
  (shiro--command "shiro.newSession")
  (shiro--insert "[new session]\n" 'shiro-dim))

(defun shiro--session-rows ()
  (append (plist-get (shiro--command "shiro.sessions" '(:limit 15)) :sessions) nil))

(defun shiro-sessions (id)
  "Pick a saved session of this project and resume it (/sessions)."
  (interactive
   (let* ((rows (shiro--session-rows))
          (choices (mapcar (lambda (r) (cons (format "%s  %s" (or (plist-get r :shortId) (substring (plist-get r :id) 0 8))
                                                     (plist-get r :title))
                                             (plist-get r :id)))
                           rows)))
     (unless choices (user-error "shiro: no saved session in this project yet"))
     (list (cdr (assoc (completing-read "Resume session: " choices nil t) choices)))))
  (shiro-resume id))

(defun shiro-resume (&optional id)
  "Resume the newest session of this project, or the one whose id starts with ID."
  (interactive (list (and current-prefix-arg (read-string "Session id (prefix): "))))
  (let* ((result (shiro--command "shiro.resume" (if id (list :id id) '(:latest t))))
         (messages (append (plist-get result :messages) nil)))
    (shiro--insert (format "[resumed \"%s\", %d messages]\n" (plist-get result :title) (length messages)) 'shiro-dim)
    (dolist (message messages)
      (let ((text (mapconcat (lambda (part) (or (plist-get part :text) ""))
                             (cl-remove-if-not (lambda (p) (equal (plist-get p :type) "text"))
                                               (append (plist-get message :content) nil))
                             "")))
        (pcase (plist-get message :role)
          ("user" (shiro--insert (format "\n› %s\n\n" text) 'shiro-prompt))
          ("assistant" (unless (string-empty-p text) (shiro--insert (concat text "\n")))))))
    result))

(provide 'shiro)
;; The model, its endpoint and key (shiro-model, shiro-model-setup), beside this file.
(require 'shiro-model (expand-file-name "shiro-model" (file-name-directory (or load-file-name buffer-file-name))))
;; Plan mode's commands (shiro-plan-mode, shiro-act, shiro-start-plan), beside this file.
(require 'shiro-plan (expand-file-name "shiro-plan" (file-name-directory (or load-file-name buffer-file-name))))
;; The editor context with each prompt, shiro/diagnostics, shiro/navigate, the inline edit (issue 38).
(require 'shiro-editor (expand-file-name "shiro-editor" (file-name-directory (or load-file-name buffer-file-name))))
;; Saved sessions: search, rename, export, delete (issue 40).
(require 'shiro-sessions (expand-file-name "shiro-sessions" (file-name-directory (or load-file-name buffer-file-name))))
;;; shiro.el ends here
