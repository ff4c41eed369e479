;;; shiro-sessions.el --- Saved sessions for shiro.el: search, rename, export, delete  -*- lexical-binding: t; -*-

;; Issue 40: `shiro-search-sessions' asks the server for the sessions of this project whose text
;; holds some words (`shiro.sessions' with a query: its full-text search) and resumes the one
;; picked with `completing-read' (each row: its short id, the shortest unique prefix, its title and
;; the passage that matched); `shiro-rename-session', `shiro-export-session' (the session as
;; Markdown in a buffer) and `shiro-delete-session' (after `yes-or-no-p'; the server refuses a
;; session another window has open).  docs/emacs.md.

;;; Code:

(require 'shiro)

(defun shiro--session-label (row)
  "ROW of `shiro.sessions' as one line: short id, title, the matched passage if any."
  (let ((snippet (plist-get row :snippet)))
    (format "%s  %s%s" (or (plist-get row :shortId) (substring (plist-get row :id) 0 8))
            (let ((title (plist-get row :title))) (if (string-empty-p title) "(untitled)" title))
            (if (stringp snippet) (concat "  — " snippet) ""))))

(defun shiro--pick-session (rows prompt)
  "The id of the session picked from ROWS with PROMPT."
  (unless rows (user-error "shiro: no session found"))
  (let ((choices (mapcar (lambda (r) (cons (shiro--session-label r) (plist-get r :id))) rows)))
    (cdr (assoc (completing-read prompt choices nil t) choices))))

(defun shiro-search-sessions (query)
  "Resume a session of this project whose text holds the words of QUERY."
  (interactive (list (read-string "Search sessions for: ")))
  (let ((rows (append (plist-get (shiro--command "shiro.sessions" (list :query query :limit 30)) :sessions) nil)))
    (unless rows (user-error "shiro: no session mentions %s" query))
    (shiro-resume (shiro--pick-session rows "Resume session: "))))

(defun shiro--current-session ()
  "The id of the session this project's chat is in."
  (plist-get (shiro--command "shiro.status") :sessionId))

(defun shiro-rename-session (title)
  "Rename this project's current session to TITLE."
  (interactive (list (read-string "Session title: ")))
  (let ((result (shiro--command "shiro.renameSession" (list :id (shiro--current-session) :title title))))
    (shiro--insert (format "[renamed \"%s\"]\n" (plist-get result :title)) 'shiro-dim)
    result))

(defun shiro-export-session ()
  "This project's current session as Markdown, in the buffer *shiro export* (save it with C-x C-w)."
  (interactive)
  (let ((text (plist-get (shiro--command "shiro.exportSession" (list :id (shiro--current-session) :format "markdown")) :text))
        (buffer (get-buffer-create "*shiro export*")))
    (with-current-buffer buffer
      (let ((inhibit-read-only t))
        (erase-buffer)
        (insert text))
      (if (fboundp 'markdown-mode) (markdown-mode) (text-mode))
      (goto-char (point-min)))
    (display-buffer buffer)
    buffer))

(defun shiro-delete-session (id)
  "Delete the saved session ID (picked from this project's sessions) after asking."
  (interactive
   (list (shiro--pick-session (append (plist-get (shiro--command "shiro.sessions" '(:limit 30)) :sessions) nil)
                              "Delete session: ")))
  (when (yes-or-no-p (format "Delete the session %s (its transcript and checkpoints)? " (substring id 0 8)))
    (let ((result (shiro--command "shiro.deleteSession" (list :id id))))
      (shiro--insert (format "[%s %s]\n" (if (eq (plist-get result :deleted) t) "deleted" "already gone:") (substring id 0 8))
                     'shiro-dim)
      result)))

(provide 'shiro-sessions)
;;; shiro-sessions.el ends here
